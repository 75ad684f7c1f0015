package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append([]*command(nil), saved...)
	var got []string
	register(&command{path: "zz probe", usage: "ARG [--n N]", summary: "test command",
		run: func(args []string, stdout io.Writer) error {
			fs := flag.NewFlagSet("zz probe", flag.ContinueOnError)
			n := fs.Int("n", 0, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			got = append(pos, strings.Repeat("x", *n))
			switch {
			case len(pos) != 1:
				return usagef("want one argument, got %d", len(pos))
			case pos[0] == "fail":
				return errors.New("it failed")
			}
			_, err = io.WriteString(stdout, "ok\n")
			return err
		}})
	register(&command{path: "zz", usage: "", summary: "shorter prefix", run: func([]string, io.Writer) error { return nil }})
	tests := []struct {
		args       []string
		wantCode   int
		wantOut    string
		wantErr    string
		wantParsed []string
	}{
		{args: []string{"zz", "probe", "a", "--n", "2"}, wantOut: "ok\n", wantParsed: []string{"a", "xx"}},
		{args: []string{"zz", "probe", "--n=1", "b"}, wantOut: "ok\n", wantParsed: []string{"b", "x"}},
		{args: []string{"zz", "probe", "a", "b"}, wantCode: 2, wantErr: "want one argument"},
		{args: []string{"zz", "probe", "--bogus"}, wantCode: 2, wantErr: "flag provided but not defined"},
		{args: []string{"zz", "probe", "fail"}, wantCode: 1, wantErr: "lakestate zz probe: it failed"},
		{args: []string{"zz", "probe", "-h"}, wantCode: 0, wantErr: "usage: lakestate zz probe ARG [--n N]"},
		{args: []string{"zz"}, wantCode: 0},
		{args: []string{"nope"}, wantCode: 2, wantErr: `unknown command "nope"`},
		{args: nil, wantCode: 2, wantErr: "zz probe ARG [--n N]\n      test command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got = nil
			var out, errOut bytes.Buffer
			if code := run(tt.args, &out, &errOut); code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tt.wantOut)
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut.String(), tt.wantErr)
			}
			if tt.wantParsed != nil && strings.Join(got, ",") != strings.Join(tt.wantParsed, ",") {
				t.Errorf("parsed %v, want %v", got, tt.wantParsed)
			}
		})
	}
}
