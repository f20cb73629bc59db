package app

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/sampler"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/chart"
	"github.com/slipwayhq/slipway/views/partial"
)

func registerUsage(f *fiber.App, h *handler) {
	f.Get("/applications/:app/environments/:environment/usage", h.requireScope(auth.AppsRead), h.usageShow)
}

// usageShow draws an environment's usage charts over ?range= (1h, 6h,
// 24h, 7d): the Overview's charts, reloaded by htmx every 15 s.
func (h *handler) usageShow(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "overview")
	if err != nil {
		return err
	}
	rng, ok := sampler.ParseRange(c.Query("range"))
	if !ok {
		return fiber.NewError(http.StatusBadRequest, "range must be 1h, 6h, 24h or 7d")
	}
	env, err := h.store.GetEnvironmentByName(c.UserContext(), a.TeamID, a.ID, c.Params("environment"))
	if err != nil {
		return err
	}
	series, err := sampler.Read(c.UserContext(), h.store, a.TeamID, env.ID, rng, h.now())
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Usage", partial.Usage(usageView(a, env, series)))
}

func usageView(a store.Application, env store.Environment, s sampler.Series) partial.UsageView {
	v := partial.UsageView{ID: partial.UsageID(env.Name), URL: partial.UsageURL(a.ID, env.Name), Range: s.Range}
	for _, r := range sampler.Ranges {
		v.Ranges = append(v.Ranges, r.Name)
	}
	spec := func(title, key, class string, format func(float64) string, floor float64, pts []chart.Point) string {
		return chart.SVG(chart.Spec{Title: title, Key: key, Class: class, From: s.From, To: s.To, Format: format, Floor: floor, Points: pts})
	}
	for _, svc := range s.Services {
		var cpu, mem, net, restarts []chart.Point
		for _, p := range svc.Points {
			cpu = append(cpu, point(p.At, p.CPU))
			mem = append(mem, point(p.At, p.Memory))
			net = append(net, sumPoint(p.At, p.RX, p.TX))
			restarts = append(restarts, chart.Point{At: p.At, V: float64(p.Restarts), OK: true})
		}
		v.Services = append(v.Services, partial.UsageBlock{Name: svc.Name, Charts: []string{
			spec("CPU", "cpu", "cpu", chart.Cores, 0.05, cpu),
			spec("Memory", "memory", "memory", chart.Bytes, 16<<20, mem),
			spec("Network in+out", "network", "network", chart.BytesPerSecond, 1024, net),
			spec("Restarts", "restarts", "restarts", chart.Count, 1, restarts),
		}})
	}
	for _, rt := range s.Routes {
		var req, p95, errs []chart.Point
		for _, p := range rt.Points {
			req = append(req, chart.Point{At: p.At, V: p.PerSecond, OK: true})
			p95 = append(p95, point(p.At, p.P95))
			errs = append(errs, point(p.At, percent(p.ErrorRate)))
		}
		v.Routes = append(v.Routes, partial.UsageBlock{Name: rt.Hostname, Charts: []string{
			spec("Requests", "requests", "requests", chart.PerSecond, 0.1, req),
			spec("p95 latency", "p95", "latency", chart.Millis, 10, p95),
			spec("Errors (5xx)", "errors", "errors", func(x float64) string { return chart.Count(x) + " %" }, 1, errs),
		}})
	}
	if len(v.Services)+len(v.Routes) == 0 {
		v.Note = "No samples in this range yet: the worker samples every 15 seconds."
	}
	return v
}

func point(at time.Time, v *float64) chart.Point {
	if v == nil {
		return chart.Point{At: at}
	}
	return chart.Point{At: at, V: *v, OK: true}
}

func sumPoint(at time.Time, a, b *float64) chart.Point {
	if a == nil || b == nil {
		return chart.Point{At: at}
	}
	return chart.Point{At: at, V: *a + *b, OK: true}
}

func percent(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := *v * 100
	return &p
}
