package setup

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// plainEvery is how often progress is printed as a plain line when stderr
// is not a terminal (a log file, CI, a pipe).
const plainEvery = 5 * time.Second

// NewProgressBar draws progress on stderr: a bar of total items, or a
// spinner with a count when the total is unknown (-1). When stderr is not a
// terminal the bar's frames would run together on one line, so it prints
// one plain line every few seconds instead, and a last one at the end.
func NewProgressBar(total int, what string) *progressbar.ProgressBar {
	return newProgress(os.Stderr, IsTerminal(os.Stderr), plainEvery, total, what)
}

// newProgress is NewProgressBar writing to w; tty says whether w is a
// terminal, every how often a plain line is printed when it is not.
func newProgress(w io.Writer, tty bool, every time.Duration, total int, what string) *progressbar.ProgressBar {
	opts := []progressbar.Option{progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(what),
		progressbar.OptionThrottle(200 * time.Millisecond)}
	if total < 0 {
		opts = append(opts, progressbar.OptionSpinnerType(14))
	}
	if tty {
		opts = append(opts, progressbar.OptionSetWriter(w))
	} else {
		lw := &lineWriter{w: w, every: every, at: time.Now()} // the first line after an interval: a rate over no time means nothing
		opts = append(opts, progressbar.OptionSetWriter(lw), progressbar.OptionUseANSICodes(false),
			progressbar.OptionSetWidth(20), progressbar.OptionOnCompletion(lw.flush))
	}
	return progressbar.NewOptions(total, opts...)
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// lineWriter receives a progress bar's frames (each redrawn over the last
// with a carriage return) and writes the latest one as a plain line at most
// once per interval, and once more when flushed.
type lineWriter struct {
	w     io.Writer
	every time.Duration

	mu      sync.Mutex
	last    string    // latest frame, not yet printed
	printed string    // the frame printed last
	at      time.Time // when a line was printed last
}

// Write keeps the newest frame and prints it when the interval has passed.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, part := range bytes.Split(p, []byte{'\r'}) {
		if s := strings.TrimSpace(string(part)); s != "" {
			l.last = s
		}
	}
	if l.last != "" && time.Since(l.at) >= l.every {
		l.printLocked()
	}
	return len(p), nil
}

// flush prints the newest frame if it has not been printed.
func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.printLocked()
}

func (l *lineWriter) printLocked() {
	if l.last == "" || l.last == l.printed {
		return
	}
	io.WriteString(l.w, l.last+"\n")
	l.printed, l.at = l.last, time.Now()
}
