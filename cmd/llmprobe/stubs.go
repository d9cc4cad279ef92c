package main

import "context"

func runDaemon(ctx context.Context, e env, args []string) error   { return badFlag("not yet") }
func runLadder(ctx context.Context, e env, args []string) error   { return badFlag("not yet") }
func runSim(ctx context.Context, e env, args []string) error      { return badFlag("not yet") }
func runValidate(ctx context.Context, e env, args []string) error { return badFlag("not yet") }
