package modelgate

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// backlogCollector reports, at each scrape, the work the stores of the
// loaded gateways still have to do: the lines of open batches not yet
// done, and the ingestions in progress (each store read for up to
// dashboardProgressLimit of each).
type backlogCollector struct {
	lines, ingestions *prometheus.Desc

	mu       sync.Mutex
	gateways map[*Gateway]struct{}
}

// backlogScrapeTimeout bounds a scrape's store reads.
const backlogScrapeTimeout = 5 * time.Second

func newBacklogCollector() *backlogCollector {
	return &backlogCollector{
		lines: prometheus.NewDesc("caddy_modelgate_batch_backlog_lines",
			"Lines of open batches not yet completed or failed (up to 20 batches per store).", nil, nil),
		ingestions: prometheus.NewDesc("caddy_modelgate_ingestion_backlog",
			"Vector store files whose ingestion is in progress (up to 20 per store).", nil, nil),
		gateways: map[*Gateway]struct{}{},
	}
}

func (c *backlogCollector) add(g *Gateway) {
	c.mu.Lock()
	c.gateways[g] = struct{}{}
	c.mu.Unlock()
}

func (c *backlogCollector) remove(g *Gateway) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.gateways, g)
	c.mu.Unlock()
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lines
	ch <- c.ingestions
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	sources := map[progressSource]struct{}{}
	c.mu.Lock()
	for g := range c.gateways {
		for _, s := range g.progressSources() {
			sources[s] = struct{}{}
		}
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), backlogScrapeTimeout)
	defer cancel()
	var lines, ingestions int64
	for s := range sources {
		p, err := s.InProgress(ctx, dashboardProgressLimit)
		if err != nil {
			continue
		}
		for _, b := range p.Batches {
			lines += max(0, int64(b.Total-b.Completed-b.Failed))
		}
		ingestions += int64(len(p.Ingestions))
	}
	ch <- prometheus.MustNewConstMetric(c.lines, prometheus.GaugeValue, float64(lines))
	ch <- prometheus.MustNewConstMetric(c.ingestions, prometheus.GaugeValue, float64(ingestions))
}
