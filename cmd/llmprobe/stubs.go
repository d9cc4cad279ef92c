package main

import "context"

func runLadder(ctx context.Context, e env, args []string) error   { return badFlag("not yet") }
