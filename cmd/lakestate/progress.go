package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress draws a one-line status on a terminal while long work runs. When
// the output is not a terminal it stays silent, so logs and pipes get only
// the summary.
type progress struct {
	w     io.Writer
	label string
	on    bool
}

func newProgress(w io.Writer, label string) *progress {
	on := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: w, label: label, on: on}
}

// tick redraws the line every 200ms with status() until the returned stop
// function is called; stop clears the line.
func (p *progress) tick(status func() string) (stop func()) {
	if !p.on {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		spin := `|/-\`
		for i := 0; ; i++ {
			select {
			case <-done:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r\033[K%c %s  %5.1fs  %s", spin[i%4], p.label, time.Since(start).Seconds(), status())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
