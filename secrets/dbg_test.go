package secrets
import ("testing";"time";"sort";"fmt")
func TestDbgRules(t *testing.T) {
	in, _ := bigInput(1 << 20)
	base := Default()
	type rt struct{id string; d time.Duration}
	var out []rt
	var total time.Duration
	for i := range base.rules {
		ru := base.rules[i]
		r := &Redactor{global: base.global, allowLits: map[string]bool{}}
		ru.kw = nil
		r.rules = []rule{ru}
		for _, k := range ru.keywords { r.rules[0].kw = append(r.rules[0].kw, len(r.keywords)); r.keywords = append(r.keywords, k) }
		best := time.Hour
		for rep := 0; rep < 5; rep++ {
			st := time.Now()
			r.String(in)
			best = min(best, time.Since(st))
		}
		total += best
		out = append(out, rt{ru.id, best})
	}
	r := &Redactor{global: base.global, allowLits: map[string]bool{}}
	best := time.Hour
	for rep := 0; rep < 5; rep++ { st := time.Now(); r.String(in); best = min(best, time.Since(st)) }
	fmt.Println("no rules", best)
	sort.Slice(out, func(a, b int) bool { return out[a].d > out[b].d })
	for _, o := range out[:16] { fmt.Println(o.id, o.d) }
	fmt.Println("total", total)
}
