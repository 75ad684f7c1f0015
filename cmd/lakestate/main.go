// Command lakestate runs, measures, simulates and inspects lakestate. Each
// subcommand lives in its own file and registers itself with register; this
// file only dispatches.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// command is one subcommand. path is its words ("inspect table").
type command struct {
	path    string
	usage   string // arguments after the path
	summary string
	run     func(args []string, stdout io.Writer) error
}

var commands []*command

// register adds a subcommand; called from the init of its file.
func register(c *command) {
	for _, o := range commands {
		if o.path == c.path {
			panic("lakestate: command registered twice: " + c.path)
		}
	}
	commands = append(commands, c)
}

// usageError reports bad arguments; the dispatcher prints the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes one command line and returns the exit status: 0 success,
// 1 failure, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	c, rest := lookup(args)
	if c == nil {
		if len(args) > 0 && !isHelp(args[0]) {
			fmt.Fprintf(stderr, "lakestate: unknown command %q\n", strings.Join(args, " "))
		}
		printUsage(stderr)
		return 2
	}
	err := c.run(rest, stdout)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stderr, "usage: lakestate %s %s\n", c.path, c.usage)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lakestate %s: %s\nusage: lakestate %s %s\n", c.path, ue.msg, c.path, c.usage)
		return 2
	}
	fmt.Fprintf(stderr, "lakestate %s: %v\n", c.path, err)
	return 1
}

// lookup finds the command whose path is the longest prefix of args.
func lookup(args []string) (*command, []string) {
	var best *command
	bestLen := 0
	for _, c := range commands {
		words := strings.Fields(c.path)
		if len(words) > bestLen && len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			best, bestLen = c, len(words)
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, args[bestLen:]
}

func isHelp(s string) bool { return s == "help" || s == "-h" || s == "-help" || s == "--help" }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: lakestate <command> [arguments]")
	fmt.Fprintln(w, "commands:")
	sorted := slices.Clone(commands)
	slices.SortFunc(sorted, func(a, b *command) int { return strings.Compare(a.path, b.path) })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %s %s\n      %s\n", c.path, c.usage, c.summary)
	}
}

// parseFlags parses flags that may come before, between or after the
// positional arguments, which it returns.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
