package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// A command is a subcommand: its usage and its flags. setup defines the
// flags on a FlagSet of the command's own and returns the function that
// runs the command once they are parsed, with the positional arguments.
type command struct {
	name     string
	synopsis string // the arguments after the name, for usage lines
	summary  string // one line, for the main usage
	help     string // what the command's own usage adds, before its flags
	setup    func(fs *flag.FlagSet) action
}

// An action runs a command: it returns the exit status, or an error to
// report (a usageErr for bad usage, errInterrupted after Ctrl-C).
type action func(ctx context.Context, e *env, args []string) (int, error)

// commands returns the subcommands, in the order the usage lists them.
func commands() []command {
	return []command{checkCommand(), lintCommand(), sitemapsCommand(), serveCommand()}
}

func lookup(name string) (*command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return &c, true
		}
	}
	return nil, false
}

const robotsHelp = `ROBOTS is a robots.txt file, "-" for standard input, or an http or https URL
of a site: the robots.txt of its scheme, host and port is fetched, so
https://example.com, https://example.com/robots.txt and
https://example.com/any/page all read https://example.com/robots.txt.
`

const exitHelp = `exit status: 0 ok; 1 a URL is disallowed, lint found an error (or, with
-strict, a warning) or a sitemap failed; 2 bad usage, or a robots.txt could not
be read (check still prints RFC 9309's verdict); 130 interrupted.
`

// printUsage writes the main usage.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "robotstxt checks URLs against robots.txt, lints robots.txt files and lists\nand walks their sitemaps.\n\nusage:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  robotstxt %s %s\n        %s\n", c.name, c.synopsis, c.summary)
	}
	fmt.Fprint(w, "  robotstxt help [COMMAND]\n        this help, or a command's own with its flags\n\n")
	fmt.Fprint(w, robotsHelp, "\n", exitHelp)
}

// printUsage writes the command's own usage, with its flags.
func (c *command) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: robotstxt %s %s\n\n%s\n", c.name, c.synopsis, c.help)
	fs := c.flagSet()
	fs.SetOutput(w)
	fmt.Fprintln(w, "flags:")
	fs.PrintDefaults()
	fmt.Fprint(w, "\n", exitHelp)
}

// flagSet returns a FlagSet with the command's flags, writing nothing.
func (c *command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c.setup(fs)
	return fs
}

// run parses the command's flags and runs it.
func (c *command) run(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below, with the command's name
	fs.Usage = func() {}
	act := c.setup(fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printUsage(e.stdout)
		return exitOK
	}
	if err != nil {
		return e.usageError(c.name, err)
	}
	e.guard = guardFor(ctx, fs, pos)
	status, err := act(ctx, e, pos)
	return e.finish(c, status, err)
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments, which it returns; "--" ends the flags. A lone "-" (standard
// input) is a positional argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// A usageErr is a mistake on the command line.
type usageErr struct{ msg string }

func (e usageErr) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageErr{fmt.Sprintf(format, args...)}
}

// usageError reports a usage error of the command named cmd ("" for the
// main command) with a short usage hint, and returns exitUsage.
func (e *env) usageError(cmd string, err error) int {
	if cmd == "" {
		fmt.Fprintf(e.stderr, "robotstxt: %v\nusage:\n", err)
		for _, c := range commands() {
			fmt.Fprintf(e.stderr, "  robotstxt %s %s\n", c.name, c.synopsis)
		}
		fmt.Fprintln(e.stderr, `run "robotstxt help" for more.`)
		return exitUsage
	}
	c, _ := lookup(cmd)
	fmt.Fprintf(e.stderr, "robotstxt: %s: %v\nusage: robotstxt %s %s\nrun \"robotstxt help %s\" for more.\n",
		cmd, err, cmd, c.synopsis, cmd)
	return exitUsage
}

// timeoutVar defines the -timeout flag every command that fetches has,
// and -allow-private (see guard.go).
func timeoutVar(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "timeout", 30*time.Second, "give up each fetch `D` after it is sent (a wait for a host's Crawl-delay or rate does not count), such as 10s or 1m")
	fs.Bool(allowPrivateFlag, false, "let fetches reach loopback, private and link-local addresses other than those of the sites named, each on its own port (refused by default)")
}

func checkTimeout(d time.Duration) error {
	if d <= 0 {
		return usagef("-timeout must be positive, got %v", d)
	}
	return nil
}

// plural returns "1 error", "2 errors".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
