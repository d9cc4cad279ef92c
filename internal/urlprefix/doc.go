// Package urlprefix is the allow-list rule of the /probe endpoint: a URL is
// allowed when it falls under one of a list of URL prefixes, compared on
// the parsed and normalised URL (scheme, host, port, and the path at a
// segment boundary), never on the raw string, so that
// http://a.example cannot match http://a.example.evil or
// http://a.example@evil, and /v1 cannot match /v10. A URL with
// credentials, a query, a fragment, dot segments or escaped slashes is
// refused outright. It is a leaf: it imports nothing of the project.
package urlprefix
