package config

// Decode (tests only) decodes a configuration file's contents over the defaults and
// validates the result, without reading the environment; name is used in
// errors.
func Decode(data []byte, name string) (Config, error) {
	c := Default()
	origins := map[string]origin{}
	errs, fatal := decodeInto(&c, data, name, origins)
	if fatal {
		return Config{}, errs
	}
	return finish(c, origins, errs)
}
