package herdrlink

// draftDetection says whether this herdr-link tells a user's draft in a
// target's composer (link.Composer). Until it does, the draft tests skip.
const draftDetection = false
