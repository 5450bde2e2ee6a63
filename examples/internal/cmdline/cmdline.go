// Package cmdline gives the example commands one shape: the same -h, the
// same exit statuses, the same handling of Ctrl-C (the report is printed,
// then the command exits 130) and the same check of a -url flag.
package cmdline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Exit statuses of every example.
const (
	ExitOK          = 0
	ExitFail        = 1   // the run failed
	ExitUsage       = 2   // bad usage, or the site cannot be reached
	ExitInterrupted = 130 // Ctrl-C: the report of what was done was printed
)

const exitHelp = "exit status: 0 done; 1 the run failed; 2 bad usage or the site cannot be\nreached; 130 interrupted (Ctrl-C), after the report of what was done.\n"

// A Command is the flags and usage of an example.
type Command struct {
	Name     string // the command's name
	Synopsis string // the arguments after the name, "[flags]" when empty
	About    string // what the command does, a paragraph
	*flag.FlagSet
}

// New returns a Command whose flags the caller defines on its FlagSet.
func New(name, synopsis, about string) *Command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if synopsis == "" {
		synopsis = "[flags]"
	}
	return &Command{Name: name, Synopsis: synopsis, About: strings.TrimSpace(about), FlagSet: fs}
}

// PrintUsage writes the usage: synopsis, what the command does, its flags
// and the exit statuses.
func (c *Command) PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s %s\n\n%s\n\nflags:\n", c.Name, c.Synopsis, c.About)
	c.SetOutput(w)
	c.PrintDefaults()
	c.SetOutput(io.Discard)
	fmt.Fprint(w, "\n", exitHelp)
}

// Parse parses args. With -h it prints the usage on stdout and returns
// ExitOK; on a mistake it prints it with a hint on stderr and returns
// ExitUsage; otherwise it returns -1 and the command runs. maxArgs bounds
// the positional arguments.
func (c *Command) Parse(args []string, maxArgs int, stdout, stderr io.Writer) int {
	err := c.FlagSet.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.PrintUsage(stdout)
		return ExitOK
	case err == nil && c.NArg() > maxArgs:
		err = fmt.Errorf("unexpected argument %q", c.Arg(maxArgs))
	}
	if err != nil {
		return c.UsageError(stderr, err)
	}
	return -1
}

// UsageError reports a usage mistake and returns ExitUsage.
func (c *Command) UsageError(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "%s: %v\nusage: %s %s\nrun \"%s -h\" for more.\n", c.Name, err, c.Name, c.Synopsis, c.Name)
	return ExitUsage
}

// Finish returns the exit status of a run that returned code: after
// Ctrl-C (ctx ended) it says so on stderr and returns ExitInterrupted.
// Call it after the report was printed.
func (c *Command) Finish(ctx context.Context, stderr io.Writer, code int) int {
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "%s: interrupted\n", c.Name)
		return ExitInterrupted
	}
	return code
}

// SiteURL checks the value of a flag such as -url: an http or https URL
// with a host. A value without a scheme gets a hint with https://; one
// with another scheme does not.
func SiteURL(flagName, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u, nil
	}
	msg := fmt.Sprintf("-%s %q is not an http or https URL with a host", flagName, raw)
	// "example.com/a" or "example.com:8080/a", not "mailto:x" or "ftp://x".
	noScheme := err == nil && (u.Scheme == "" || u.Opaque != "" && '0' <= u.Opaque[0] && u.Opaque[0] <= '9')
	if noScheme && !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "/") {
		if h, herr := url.Parse("https://" + raw); herr == nil && h.Host != "" {
			msg += fmt.Sprintf(" (try %q)", "https://"+raw)
		}
	}
	return nil, errors.New(msg)
}

// ErrorText returns the text of err for a line that names u already:
// without u, which the errors of robotsmw and net/http carry.
func ErrorText(err error, u *url.URL) string {
	if ue, ok := err.(*url.Error); ok && (ue.URL == u.String() || ue.URL == u.Redacted()) {
		err = ue.Err // net/http's "Get URL: …": the line has the URL
	}
	msg := err.Error()
	for _, s := range []string{u.Redacted(), u.String()} {
		for _, t := range []string{` "` + s + `": `, " " + s + ": ", s + " ", s + ": ", s} {
			if strings.Contains(msg, t) {
				return strings.Join(strings.Fields(strings.Replace(msg, t, " ", 1)), " ")
			}
		}
	}
	return msg
}
