package bench

import (
	"fmt"
	"io"
)

// runWorlds runs the bench once per simulated Herdr release of
// -herdr-version (0.8.2 and 0.9.x answer agent.prompt at different times,
// so send latency differs), each report under a heading naming its world;
// without the flag, once.
func runWorlds(c benchConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(c.worlds) == 0 {
		return runBench(c, stdin, stdout, stderr)
	}
	for i, v := range c.worlds {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if c.format == "table" {
			fmt.Fprintf(stdout, "## world: Herdr %s\n\n", v)
		}
		c.herdr = v
		if err := runBench(c, stdin, stdout, stderr); err != nil {
			return fmt.Errorf("simulated Herdr %s: %w", v, err)
		}
	}
	return nil
}
