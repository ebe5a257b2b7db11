package modelgate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/module/budget"
)

// TestBudgetsCaddyfile: the budget lines of a key and an owner and the
// budgets block read into the config, and each bad value is refused at
// its line with the reason.
func TestBudgetsCaddyfile(t *testing.T) {
	var g Gateway
	err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`modelgate {
		key sk-x {
			budget 10 day
			budget 0.000001 week
		}
		owner team-a {
			budget 1000000 month
		}
		budgets {
			time_zone Europe/Paris
			unpriced allow
			default_max_output 4096
		}
		price openai m {
			input 1
			max_output 8192
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []budget.Limit{{USD: "10", Period: "day"}, {USD: "0.000001", Period: "week"}}; !reflect.DeepEqual(g.Keys[0].Budgets, want) {
		t.Errorf("key budgets %+v", g.Keys[0].Budgets)
	}
	if want := []OwnerConfig{{Owner: "team-a", Budgets: []budget.Limit{{USD: "1000000", Period: "month"}}}}; !reflect.DeepEqual(g.Owners, want) {
		t.Errorf("owners %+v", g.Owners)
	}
	if want := (budget.Settings{TimeZone: "Europe/Paris", Unpriced: "allow", DefaultMaxOutput: 4096}); *g.BudgetSettings != want {
		t.Errorf("settings %+v", g.BudgetSettings)
	}
	if g.Prices[0].MaxOutput != 8192 {
		t.Errorf("max_output %d", g.Prices[0].MaxOutput)
	}
	for input, want := range map[string]string{
		`key k { budget 0 day }`:                   "not above zero",
		`key k { budget 1000000.5 day }`:           "above 1000000 USD",
		`key k { budget 1.0000001 day }`:           "at most six decimals",
		`key k { budget 1 year }`:                  "day, week or month",
		`key k { budget 1 }`:                       "wrong argument count",
		`owner o { budget 1 day; budget 2 day }`:   "two budgets per day",
		`owner o { limit 1 day }`:                  `unrecognized owner option "limit"`,
		`budgets { time_zone Mars/Olympus }`:       "unknown time zone",
		`budgets { unpriced maybe }`:               "refuse or allow",
		`budgets { default_max_output 0 }`:         "at least 1",
		`price openai m { input 1; max_output x }`: "max_output",
	} {
		var g Gateway
		err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser("modelgate {\n" + strings.NewReplacer("; ", "\n", "{ ", "{\n", " }", "\n}").Replace(input) + "\n}"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", input, err, want)
		}
	}
}
