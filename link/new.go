package link

// New makes the Link of cfg, or returns a [*ConfigError]: Herdr is nil,
// or [Config.Validate]'s.
func New(cfg Config) (*Link, error) {
	if cfg.Herdr == nil {
		return nil, &ConfigError{Field: "Herdr", Value: nil, Problem: "must be set"}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Link{cfg: cfg}
	l.d = newDeliverer(l)
	l.c = newCourier(l)
	l.starts = newLauncher(l)
	return l, nil
}
