package config

// Allowed says what a key accepts, in the words of its config errors, so a
// flag error can say the same; "" for a key with no rule.
func Allowed(key string) string { return rules()[key].allowed }
