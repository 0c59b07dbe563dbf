package llm

import (
	"context"
	"testing"
)

func TestReportInput(t *testing.T) {
	ReportInput(context.Background(), 5) // no report asked for: nothing happens
	var got []int
	ctx := WithInputReport(context.Background(), func(n int) { got = append(got, n) })
	ReportInput(ctx, 0)
	ReportInput(ctx, 7)
	if len(got) != 1 || got[0] != 7 {
		t.Fatalf("reported %v, want [7]", got)
	}
}
