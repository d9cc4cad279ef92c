package admin

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// ServerOptions configure NewServerWith.
type ServerOptions struct {
	Handler       http.Handler
	Addrs         []string // e.g. ":9464"
	WebConfigFile string   // TLS and basic auth (exporter-toolkit); "" = plain HTTP
	// HealthWithoutAuth serves GET/HEAD of /-/healthy and /-/ready without basic auth
	// when the web config sets basic_auth_users; every other path keeps it
	// (admin.health_without_auth).
	HealthWithoutAuth bool
	Logger            *slog.Logger
}

// NewServerWith returns a server as o says.
func NewServerWith(o ServerOptions) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	systemd := false
	addrs, file := o.Addrs, o.WebConfigFile
	return &Server{
		srv:               &http.Server{Handler: o.Handler, ReadHeaderTimeout: 10 * time.Second},
		flags:             &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &file},
		log:               log,
		healthWithoutAuth: o.HealthWithoutAuth,
	}
}

// exemptHealth puts authGate in front of the handler and gives the toolkit
// the web config without its users, when health_without_auth is on and the
// web config has users (see authGate).
func (s *Server) exemptHealth() (cleanup func(), err error) {
	if !s.healthWithoutAuth || *s.flags.WebConfigFile == "" {
		return func() {}, nil
	}
	orig := *s.flags.WebConfigFile
	copyPath, hasUsers, cleanup, err := withoutUsers(orig)
	if err != nil || !hasUsers {
		return cleanup, err
	}
	*s.flags.WebConfigFile = copyPath
	s.srv.Handler = newAuthGate(orig, s.srv.Handler, s.log)
	s.log.Info("basic auth on every path but the health checks (admin.health_without_auth)", "unauthenticated", healthyPath+" "+readyPath)
	return cleanup, nil
}
