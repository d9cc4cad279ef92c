// Package deploy holds no code: it carries the offline validation tests of
// the deployment files (Dockerfile, deploy/kubernetes, deploy/compose).
package deploy
