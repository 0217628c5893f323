package link

// NoticeText is the typed text of notice n, for the external tests.
func NoticeText(n Notice) string { return n.Text() }
