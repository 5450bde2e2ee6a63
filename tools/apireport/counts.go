package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteCounts prints a table of the exported identifiers of each package,
// by kind, with their total.
func WriteCounts(w io.Writer, apis []API) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\ttypes\tfuncs\tmethods\tfields\tconsts\tvars\ttotal\t")
	for _, a := range apis {
		c := a.Counts
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", a.Dir, c.Types, c.Funcs, c.Methods, c.Fields, c.Consts, c.Vars, c.Total())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("apireport: %w", err)
	}
	return nil
}
