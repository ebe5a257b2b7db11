package budget

import (
	"testing"
	"time"
)

// TestWindowAtTheBoundaries: each period's window holds the last
// nanosecond before its end and not the first of the next one, in UTC and
// in zones whose days are 23 or 25 hours long, across months of 28 to 31
// days and a year's end; weeks start on Monday.
func TestWindowAtTheBoundaries(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		period     Period
		loc        *time.Location
		boundary   string // an instant where a period starts, in loc
		before     string // the name of the period ending there
		after      string // the name of the one starting there
		afterHours float64
	}{
		{Day, time.UTC, "2026-11-28T00:00:00Z", "2026-11-27", "2026-11-28", 24},
		{Day, paris, "2026-03-29T00:00:00+01:00", "2026-03-28", "2026-03-29", 23}, // clocks go forward at 02:00
		{Day, paris, "2026-10-25T00:00:00+02:00", "2026-10-24", "2026-10-25", 25}, // and back at 03:00
		{Week, time.UTC, "2026-11-30T00:00:00Z", "2026-11-23", "2026-11-30", 168}, // Monday
		{Week, time.UTC, "2027-01-04T00:00:00Z", "2026-12-28", "2027-01-04", 168}, // across a year
		{Week, paris, "2026-03-30T00:00:00+02:00", "2026-03-23", "2026-03-30", 168},
		{Month, time.UTC, "2026-12-01T00:00:00Z", "2026-11", "2026-12", 31 * 24},
		{Month, time.UTC, "2028-03-01T00:00:00Z", "2028-02", "2028-03", 31 * 24}, // after a leap February
		{Month, time.UTC, "2027-01-01T00:00:00Z", "2026-12", "2027-01", 31 * 24},
		{Month, paris, "2026-11-01T00:00:00+01:00", "2026-10", "2026-11", 30 * 24},
	}
	for _, c := range cases {
		at, err := time.Parse(time.RFC3339, c.boundary)
		if err != nil {
			t.Fatal(err)
		}
		name, start, end := c.period.Window(c.loc, at.Add(-time.Nanosecond))
		if name != c.before || !end.Equal(at) || !start.Before(at) {
			t.Errorf("%s %s just before %s: %s [%s, %s)", c.period, c.loc, c.boundary, name, start, end)
		}
		name, start, end = c.period.Window(c.loc, at)
		if name != c.after || !start.Equal(at) || end.Sub(start).Hours() != c.afterHours {
			t.Errorf("%s %s at %s: %s [%s, %s), want %s of %v hours", c.period, c.loc, c.boundary, name, start, end, c.after, c.afterHours)
		}
	}
	// The same instant is in different days in different zones.
	at := time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC)
	if utc, _, _ := Day.Window(time.UTC, at); utc != "2026-11-27" {
		t.Errorf("UTC day %s", utc)
	}
	if local, _, _ := Day.Window(paris, at); local != "2026-11-28" {
		t.Errorf("Paris day %s", local)
	}
}
