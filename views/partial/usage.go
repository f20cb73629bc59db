package partial

import "net/url"

// UsageURL is the address of an environment's usage charts.
func UsageURL(appID, envName string) string {
	return "/applications/" + url.PathEscape(appID) + "/environments/" + url.PathEscape(envName) + "/usage"
}

// UsageID is the element id of an environment's usage charts.
func UsageID(envName string) string { return "usage-" + envName }
