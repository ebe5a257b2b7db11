package budget

import (
	"fmt"
	"time"
)

// Period is the calendar period a budget runs for.
type Period string

// The periods: a calendar day, a week from Monday, a calendar month, each
// from midnight in the budgets' time zone.
const (
	Day   Period = "day"
	Week  Period = "week"
	Month Period = "month"
)

func parsePeriod(s string) (Period, error) {
	switch p := Period(s); p {
	case Day, Week, Month:
		return p, nil
	}
	return "", fmt.Errorf("period must be day, week or month, got %q", s)
}

// Window is the period that holds now in loc: its name (the date it
// starts on: 2026-11-27 for a day or a week, 2026-11 for a month), its
// start and its end (the next one's start). Periods start at midnight
// local time, or at the first instant after it where a daylight saving
// change skips midnight; so a day is 23, 24 or 25 hours long.
func (p Period) Window(loc *time.Location, now time.Time) (name string, start, end time.Time) {
	y, m, d := now.In(loc).Date()
	switch p {
	case Week:
		// time.Weekday counts from Sunday; weeks start on Monday.
		d -= (int(now.In(loc).Weekday()) + 6) % 7
		start, end = time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+7, 0, 0, 0, 0, loc)
		return start.Format(time.DateOnly), start, end
	case Month:
		start, end = time.Date(y, m, 1, 0, 0, 0, 0, loc), time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
		return start.Format("2006-01"), start, end
	}
	start, end = time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	return start.Format(time.DateOnly), start, end
}
