package main

import "io"

func probe(args []string, stdout, stderr io.Writer) int { return 2 }
func bench(args []string, stdout, stderr io.Writer) int { return 2 }
