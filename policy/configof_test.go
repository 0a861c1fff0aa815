package policy

import (
	"reflect"
	"testing"

	"github.com/debussy-dev/debussy/config"
)

// Whatever ConfigOf reads of a configuration, a run records (run_started's
// threshold, window, cap and Recorded) and a replay puts back
// (WithRecorded): every field of config.Config is
// changed in turn, and the policy a replay builds from the record must
// equal the run's. A field ConfigOf starts to read without Recorded
// keeping it fails here.
func TestRecordedCoversConfigOf(t *testing.T) {
	base := config.Defaults()
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		c := config.Defaults()
		if !change(reflect.ValueOf(&c).Elem().Field(i)) {
			continue
		}
		rec := Recorded(c)
		replayed := WithRecorded(config.Defaults(), c.ContextThreshold, c.ContextWindow, &c.ContextMaxTokens, &rec)
		if got, want := ConfigOf(replayed, "1", "/h", "/r"), ConfigOf(c, "1", "/h", "/r"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the policy replayed from the record differs from the run's:\n got %+v\nwant %+v", name, got, want)
		}
		if name == "Budget" && replayed.Budget.Enforcement != c.Budget.Enforcement {
			t.Errorf("budget enforcement (the adaptive trigger) is not recorded")
		}
	}
}

// change sets v to a value other than its default; false for kinds it
// does not change.
func change(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Struct:
		changed := false
		for i := range v.NumField() {
			changed = change(v.Field(i)) || changed
		}
		return changed
	default:
		return false
	}
	return true
}
