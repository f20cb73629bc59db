package manifest

// Redirect defaults and the statuses a redirect may use.
const DefaultRedirectStatus = 308

var redirectStatuses = map[int]bool{301: true, 302: true, 303: true, 307: true, 308: true}

func (v *validator) routes() {
	routes := v.m.Spec.Routes
	v.budget("spec.routes", len(routes), MaxRoutes, "routes per application")
	names := map[string]int{}
	hosts := map[string]int{}
	for i := range routes {
		r := &routes[i]
		p := joinIndex("spec.routes", i)
		if r.Name != "" {
			v.name(p+".name", r.Name, "route name")
			if prev, dup := names[r.Name]; dup {
				v.add(p+".name", "route_name_duplicate", "route name %q is already used by spec.routes[%d]", r.Name, prev)
			} else {
				names[r.Name] = i
			}
		}
		host := ""
		if !v.deferred(r.Hostname) {
			host = NormalizeHostname(r.Hostname)
			if code, msg := checkHostname(host); code != "" {
				v.add(p+".hostname", code, "hostname %s", msg)
				host = ""
			} else if prev, dup := hosts[host]; dup {
				v.add(p+".hostname", "route_hostname_duplicate", "hostname %s is already routed by spec.routes[%d]", host, prev)
			} else {
				hosts[host] = i
			}
		}
		switch r.Visibility {
		case "", VisibilityPublic, VisibilityPrivate:
		default:
			v.add(p+".visibility", "visibility_invalid", "visibility must be public or private, got %q", r.Visibility)
		}
		if r.Redirect != nil {
			if r.Service != "" || r.Port != 0 {
				v.add(p+".redirect", "route_target_invalid", "a route either proxies to service and port or redirects, not both")
			}
			v.redirect(p+".redirect", r.Redirect, host)
			continue
		}
		switch {
		case r.Service == "":
			v.add(p+".service", "route_target_invalid", "a route needs a service and port, or a redirect")
		default:
			if _, ok := v.serviceIndex[r.Service]; !ok {
				v.add(p+".service", "route_service_missing", "%q is not a service of this application", r.Service)
			}
			if r.Port < 1 || r.Port > 65535 {
				v.add(p+".port", "route_port_invalid", "port must be the service's HTTP port, between 1 and 65535, got %d", r.Port)
			}
		}
	}
}

func (v *validator) redirect(p string, rd *Redirect, routeHost string) {
	if !v.deferred(rd.To) {
		host, msg := checkRedirectTo(rd.To)
		switch {
		case msg != "":
			v.add(p+".to", "redirect_to_invalid", "redirect to %s", msg)
		case routeHost != "" && hostnameServes(routeHost, host):
			v.add(p+".to", "redirect_loop", "redirect to %s targets %s, which this route serves itself", quoteValue(rd.To), host)
		}
	}
	if rd.Status != 0 && !redirectStatuses[rd.Status] {
		v.add(p+".status", "redirect_status_invalid", "status must be 301, 302, 303, 307 or 308, got %d", rd.Status)
	}
}

// Generated secret defaults.
const DefaultSecretEncoding = EncodingHex

var rsaBits = map[int]bool{2048: true, 3072: true, 4096: true}

func (v *validator) generatedSecrets() {
	secrets := v.m.Spec.Secrets
	v.budget("spec.secrets", len(secrets), MaxGeneratedSecrets, "generated secrets per application")
	stored := make(map[string]bool, len(v.opts.StoredSecretNames))
	for _, n := range v.opts.StoredSecretNames {
		stored[n] = true
	}
	seen := map[string]bool{}
	for i := range secrets {
		s := &secrets[i]
		p := joinIndex("spec.secrets", i)
		v.name(p+".name", s.Name, "secret name")
		if seen[s.Name] && s.Name != "" {
			v.add(p+".name", "secret_name_duplicate", "secret %q is declared more than once", s.Name)
		}
		seen[s.Name] = true
		if stored[s.Name] {
			v.add(p+".name", "secret_name_conflict", "secret %q has a stored value; a name is either generated or stored: rename the declaration or delete the stored secret", s.Name)
		}
		g := &s.Generate
		gp := p + ".generate"
		switch g.Type {
		case GenerateRandom:
			if g.Bytes < MinRandomSecretBytes || g.Bytes > MaxRandomSecretBytes {
				v.add(gp+".bytes", "secret_generate_invalid", "random secrets use 16 to 512 bytes, got %d", g.Bytes)
			}
			if g.Encoding != "" && g.Encoding != EncodingHex && g.Encoding != EncodingBase64URL {
				v.add(gp+".encoding", "secret_generate_invalid", "encoding must be hex or base64url, got %q", g.Encoding)
			}
			if g.Bits != 0 {
				v.add(gp+".bits", "secret_generate_invalid", "bits applies to rsa secrets only")
			}
		case GenerateRSA:
			if !rsaBits[g.Bits] {
				v.add(gp+".bits", "secret_generate_invalid", "RSA keys are 2048, 3072 or 4096 bits, got %d", g.Bits)
			}
			if g.Bytes != 0 {
				v.add(gp+".bytes", "secret_generate_invalid", "bytes applies to random secrets only")
			}
			if g.Encoding != "" {
				v.add(gp+".encoding", "secret_generate_invalid", "encoding applies to random secrets only; RSA keys are PKCS#8 PEM")
			}
		case "":
			v.add(gp+".type", "field_required", "generate needs a type: random or rsa")
		default:
			v.add(gp+".type", "secret_generate_invalid", "unsupported generator %q; use random or rsa", g.Type)
		}
	}
}
