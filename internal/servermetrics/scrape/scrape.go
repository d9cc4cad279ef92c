package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// Defaults and bounds of Options.
const (
	DefaultTimeout      = 2 * time.Second
	DefaultMaxBodyBytes = 4 << 20 // vLLM's /metrics is tens of KiB
	MinInterval         = 100 * time.Millisecond
)

// Options configure a Scraper.
type Options struct {
	URL string // the server's metrics endpoint, e.g. http://127.0.0.1:8000/metrics
	// Interval between samples inside a window; 0 takes only the start and
	// end scrapes. At least MinInterval otherwise.
	Interval time.Duration
	Timeout  time.Duration         // per scrape; 0 = DefaultTimeout
	Flavour  servermetrics.Flavour // "" or Auto: detected at each window's start
	Metrics  []string              // further metric names to follow
	// MaxBodyBytes bounds a response body after decompression; 0 =
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Client sends the scrapes (e.g. one carrying the target's TLS
	// settings); nil = a client of the package's own that follows no
	// redirect. No credentials are added to a scrape.
	Client *http.Client
	// Redactor cleans error texts (it knows the target's secrets); nil
	// cleans without redacting.
	Redactor *sanitize.Redactor
	// Now is the clock stamping expositions; nil = time.Now.
	Now func() time.Time
}

// Scraper reads one server's metrics endpoint. It is safe for concurrent
// use.
type Scraper struct {
	o      Options
	url    string // sanitised, for views and errors
	client *http.Client
}

// New checks o and returns a Scraper.
func New(o Options) (*Scraper, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("servermetrics: url %q: want an absolute http(s) URL", sanitize.URL(o.URL))
	}
	if o.Interval != 0 && o.Interval < MinInterval {
		return nil, fmt.Errorf("servermetrics: interval %s: want 0 (start and end only) or at least %s", o.Interval, MinInterval)
	}
	if o.Timeout < 0 || o.MaxBodyBytes < 0 {
		return nil, errors.New("servermetrics: negative timeout or body bound")
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	f, err := servermetrics.ParseFlavour(string(o.Flavour))
	if err != nil {
		return nil, fmt.Errorf("servermetrics: %w", err)
	}
	o.Flavour = f
	if o.Now == nil {
		o.Now = time.Now
	}
	c := o.Client
	if c == nil {
		c = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Scraper{o: o, url: sanitize.URL(o.URL), client: c}, nil
}

// Scrape fetches and parses the endpoint once. Errors name the URL
// (sanitised) and what went wrong, with any server text cleaned.
func (s *Scraper) Scrape(ctx context.Context) (*servermetrics.Exposition, error) {
	e, err := s.scrape(ctx)
	if err != nil {
		return nil, &ScrapeError{
			msg:   fmt.Sprintf("scrape %s: %s", s.url, servermetrics.CleanError(s.o.Redactor, err)),
			cause: s.o.Redactor.String(causeOf(err, s.o.Timeout), causeMax),
		}
	}
	return e, nil
}

func (s *Scraper) scrape(ctx context.Context) (*servermetrics.Exposition, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.o.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", servermetrics.AcceptHeader)
	req.Header.Set("User-Agent", "llmprobe-servermetrics")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named once, sanitised, by Scrape
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, statusError(resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.o.MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > s.o.MaxBodyBytes {
		return nil, fmt.Errorf("body larger than %d bytes", s.o.MaxBodyBytes)
	}
	at := s.o.Now()
	e, err := servermetrics.Parse(body, resp.Header.Get("Content-Type"))
	if err != nil {
		return nil, parseError{err}
	}
	e.At = at
	return e, nil
}

// URL returns the scraped URL as views and errors name it (sanitised).
func (s *Scraper) URL() string { return s.url }

// Window is an open measurement window: Start scraped once, and with an
// interval a sampler goroutine keeps scraping until End, Close or the
// context given to Start ends. End and Close let a scrape in flight finish
// (at most the scrape timeout), so every scrape the server answered is
// used.
type Window struct {
	s        *Scraper
	stop     chan struct{} // closed by End and Close
	stopOnce sync.Once
	done     chan struct{} // closed when the sampler has returned

	mu        sync.Mutex
	acc       *servermetrics.Accumulator
	failed    int
	lastErr   string
	lastCause string
	ended     bool
	slots     int    // the server's slots (llama.cpp), 0 = unknown
	slotsErr  string // why they are unknown
}

// Start scrapes the endpoint and opens a window. A failed start scrape is
// an error and no window (nothing would anchor the deltas).
func (s *Scraper) Start(ctx context.Context) (*Window, error) {
	e, err := s.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	w := &Window{s: s, acc: servermetrics.NewAccumulator(s.o.Flavour, s.o.Metrics), stop: make(chan struct{}), done: make(chan struct{})}
	w.acc.Add(e)
	if w.acc.Flavour() == servermetrics.LlamaCPP {
		if n, err := s.slots(ctx); err != nil {
			w.slotsErr = servermetrics.CleanError(s.o.Redactor, err)
		} else {
			w.slots = n
		}
	}
	if s.o.Interval <= 0 {
		close(w.done)
		return w, nil
	}
	go w.sample(ctx)
	return w, nil
}

// sample scrapes every interval until the window stops or its context
// ends.
func (w *Window) sample(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(w.s.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case <-t.C:
		}
		e, err := w.s.Scrape(ctx)
		if err != nil && ctx.Err() != nil {
			return // cut short by the context: not the server's failure
		}
		w.mu.Lock()
		if err != nil {
			w.failed++
			w.lastErr, w.lastCause = err.Error(), servermetrics.FailureCause(err)
		} else {
			w.acc.Add(e)
		}
		w.mu.Unlock()
	}
}

// halt stops the sampler and waits for it.
func (w *Window) halt() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

// Close stops the sampler without a view (a step abandoned). It waits for
// the sampler to return; End after Close is an error.
func (w *Window) Close() {
	w.halt()
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
}

// End stops the sampler, scrapes once more and returns the window's view.
// It always returns the best view it has: when the end scrape fails the
// view ends at the last successful sample, is marked Partial, and the error
// says why. End may be called once.
func (w *Window) End(ctx context.Context) (servermetrics.View, error) {
	w.halt()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return servermetrics.View{}, errors.New("servermetrics: window already ended")
	}
	w.ended = true
	e, err := w.s.Scrape(ctx)
	if err == nil {
		w.acc.Add(e)
	} else {
		w.failed++
		w.lastErr, w.lastCause = err.Error(), servermetrics.FailureCause(err)
	}
	v := w.acc.View()
	v.URL = w.s.url
	v.FailedScrapes = w.failed
	if err != nil {
		v.Partial = true
		v.Error = w.lastErr
		v.Notes = append(v.Notes, "the end scrape failed: the window ends at the last successful scrape")
	}
	if w.failed > 0 && err == nil {
		v.Error = w.lastErr
	}
	if w.failed > 0 {
		v.FailureCause = w.lastCause
	}
	v.Slots = w.slots
	if w.slotsErr != "" {
		v.Notes = append(v.Notes, "number of slots unknown (idle slots not given): "+w.slotsErr)
	}
	v.Explanation = servermetrics.Explain(v)
	return v, err
}
