package robotsprom

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsmw/robotsmw/internal/promtext"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// A Collector is a prometheus.Collector of one Guard's Stats. Register it
// once per Guard; two Guards in one registry need different ConstLabels.
// It is safe for concurrent use; its fields must not be changed after it
// was registered.
type Collector struct {
	// ConstLabels are added to every series, to tell the Guards of one
	// process apart (prometheus.Labels{"crawl": "news"}). May be nil.
	ConstLabels prometheus.Labels

	g *robotsmw.Guard

	once  sync.Once
	descs map[string]*prometheus.Desc // by family name
}

// NewCollector returns a Collector of g's Stats.
func NewCollector(g *robotsmw.Guard) *Collector {
	return &Collector{g: g}
}

// init makes the descriptors of every family.
func (c *Collector) init() {
	c.once.Do(func() {
		c.descs = make(map[string]*prometheus.Desc)
		for _, m := range promtext.Metrics(robotsmw.Stats{}) {
			var labels []string
			if m.Label != "" {
				labels = []string{m.Label}
			}
			c.descs[m.Name] = prometheus.NewDesc(m.Name, m.Help, labels, c.ConstLabels)
		}
	})
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.init()
	for _, m := range promtext.Metrics(robotsmw.Stats{}) {
		ch <- c.descs[m.Name]
	}
}

// Collect implements prometheus.Collector: one Stats snapshot per scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.init()
	for _, m := range promtext.Metrics(c.g.Stats()) {
		d := c.descs[m.Name]
		switch m.Kind {
		case promtext.Histogram:
			buckets := make(map[float64]uint64, len(m.Waits.Buckets))
			for _, b := range m.Waits.Buckets {
				buckets[b.UpTo.Seconds()] = uint64(b.Count)
			}
			ch <- prometheus.MustNewConstHistogram(d, uint64(m.Waits.Count), m.Waits.Sum.Seconds(), buckets)
		default:
			vt := prometheus.CounterValue
			if m.Kind == promtext.Gauge {
				vt = prometheus.GaugeValue
			}
			for _, s := range m.Samples {
				var lv []string
				if m.Label != "" {
					lv = []string{s.LabelValue}
				}
				ch <- prometheus.MustNewConstMetric(d, vt, s.Value, lv...)
			}
		}
	}
}

var _ prometheus.Collector = (*Collector)(nil)
