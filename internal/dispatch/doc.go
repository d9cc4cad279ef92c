// Package dispatch turns a plan into requests at absolute times. Open-loop
// streams are anchored at one start instant and never wait for a response
// before the next arrival; an optional in-flight cap ends arrivals that find
// it full as unsent (client_cap) at their planned time. Closed-loop users
// (N users, think time) exist for comparison and are labelled closed loop.
// A Group owns every in-flight request of a run and drains it: after the
// drain deadline what is still in flight is cancelled and recorded censored.
package dispatch
