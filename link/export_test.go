package link

// NoticeText is noticeText, for the external tests.
var NoticeText = noticeText
