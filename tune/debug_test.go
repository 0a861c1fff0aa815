package tune

import (
	"fmt"
	"testing"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/history"
)

func TestZZDebug(t *testing.T) {
	r := history.Runs("/tmp/tune-sample/.debussy", history.RunFilter{})
	w := layout(&r.Streams[0])
	m := measure([]*work{w})
	for i, p := range w.pos {
		fmt.Println(i, p.delta, p.known, p.start, p.brk, p.rec, p.base, len(p.turn.Calls), p.turn.Refused, p.turn.Done)
	}
	out := replay(w, config.Defaults(), 200000, &m)
	for _, t := range out.turns {
		fmt.Print(t.ctx, " ")
	}
	fmt.Println(out.restarts, out.sessions)
}
