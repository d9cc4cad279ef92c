package protocol

import (
	"context"
	"net/http"
)

// ObserveFirstToken returns an Adapter that behaves exactly as a and, for
// each stream it decodes, calls fn once, when the stream's first token is
// decoded: the first event carrying visible content, or reasoning too when
// anyToken (the TTFT boundary). It observes only: events, errors and
// timing are a's. Use one per request (the ladder marks the request whose
// first token arrived); fn must be safe to call from the request's
// goroutine.
func ObserveFirstToken(a Adapter, anyToken bool, fn func()) Adapter {
	return firstTokenAdapter{a: a, anyToken: anyToken, fn: fn}
}

type firstTokenAdapter struct {
	a        Adapter
	anyToken bool
	fn       func()
}

func (o firstTokenAdapter) Name() string { return o.a.Name() }

func (o firstTokenAdapter) Request(ctx context.Context, base BaseURL, p Params) (*http.Request, error) {
	return o.a.Request(ctx, base, p)
}

func (o firstTokenAdapter) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	return requestTo(ctx, o, base, p)
}

func (o firstTokenAdapter) AuthStyle() AuthStyle { return o.a.AuthStyle() }

func (o firstTokenAdapter) NewDecoder() Decoder {
	return &firstTokenDecoder{d: o.a.NewDecoder(), anyToken: o.anyToken, fn: o.fn}
}

type firstTokenDecoder struct {
	d        Decoder
	anyToken bool
	fn       func()
	seen     bool
}

func (o *firstTokenDecoder) CanEnd() bool { return o.d.CanEnd() }

func (o *firstTokenDecoder) Decode(name string, data []byte) (Event, error) {
	ev, err := o.d.Decode(name, data)
	if err == nil && !o.seen && (ev.Content || (o.anyToken && ev.Reasoning)) {
		o.seen = true
		if o.fn != nil {
			o.fn()
		}
	}
	return ev, err
}
