package main

import "github.com/spf13/cobra"

func newBenchCommand() *cobra.Command {
	return &cobra.Command{Use: "bench", Short: "Measure the repository (scenarios: rest)"}
}
