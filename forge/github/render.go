package github

import (
	"fmt"
	"strings"
)

// Comment statuses, in the order a preview usually goes through them.
const (
	CommentApprovalRequired = "approval_required"
	CommentQueued           = "queued"
	CommentBuilding         = "building"
	CommentDeploying        = "deploying"
	CommentReady            = "ready"
	CommentFailed           = "failed"
	CommentRemoved          = "removed"
)

// RouteLink is one route of a preview and its URL.
type RouteLink struct {
	Name string // the route's name, or its hostname when unnamed
	URL  string
}

// CommentData is everything the pull request comment shows.
type CommentData struct {
	ApplicationID   string
	ApplicationName string
	Status          string // one of the Comment* statuses
	CommitSHA       string
	Routes          []RouteLink
	DeploymentURL   string // the deployment in the dashboard
	// FailedStep and Error say what failed; only the first
	// commentErrorLines lines of Error are shown.
	FailedStep string
	Error      string
	// ApprovalURL is where a member approves a preview that waits for it.
	ApprovalURL string
}

const (
	commentErrorLines   = 10
	commentLineMaxRunes = 300
)

var statusTitles = map[string]string{
	CommentApprovalRequired: "⏸️ Waiting for approval",
	CommentQueued:           "⏳ Queued",
	CommentBuilding:         "🔨 Building",
	CommentDeploying:        "🚢 Deploying",
	CommentReady:            "✅ Ready",
	CommentFailed:           "❌ Failed",
	CommentRemoved:          "🗑️ Removed",
}

// RenderComment renders the pull request comment of one application. It is
// a pure function of d; the first line is the application's Marker.
func RenderComment(d CommentData) string {
	var b strings.Builder
	b.WriteString(Marker(d.ApplicationID))
	b.WriteString("\n")
	title, ok := statusTitles[d.Status]
	if !ok {
		title = d.Status
	}
	fmt.Fprintf(&b, "### Slipway preview of **%s**: %s\n\n", cell(d.ApplicationName), title)

	var facts []string
	if d.CommitSHA != "" {
		facts = append(facts, "Commit `"+shortSHA(d.CommitSHA)+"`")
	}
	if d.DeploymentURL != "" {
		facts = append(facts, "[Deployment]("+d.DeploymentURL+")")
	}
	if len(facts) > 0 {
		b.WriteString(strings.Join(facts, " · "))
		b.WriteString("\n\n")
	}

	switch d.Status {
	case CommentApprovalRequired:
		b.WriteString("This pull request comes from a fork or from an author without write access to the repository, " +
			"so no preview is deployed automatically. A member of the team must approve it")
		if d.ApprovalURL != "" {
			b.WriteString(" [in Slipway](" + d.ApprovalURL + ")")
		}
		b.WriteString(".\n")
	case CommentRemoved:
		b.WriteString("The preview was removed.\n")
	case CommentFailed:
		step := d.FailedStep
		if step == "" {
			step = "deployment"
		}
		fmt.Fprintf(&b, "The preview failed at step **%s**.\n", cell(step))
		if lines := errorLines(d.Error); lines != "" {
			fence := codeFence(lines)
			b.WriteString("\n" + fence + "\n" + lines + "\n" + fence + "\n")
		}
	}

	if len(d.Routes) > 0 && d.Status != CommentRemoved && d.Status != CommentApprovalRequired {
		if !strings.HasSuffix(b.String(), "\n\n") {
			b.WriteString("\n")
		}
		b.WriteString("| Route | Preview URL |\n|---|---|\n")
		for _, r := range d.Routes {
			fmt.Fprintf(&b, "| %s | %s |\n", cell(r.Name), cell(r.URL))
		}
	}
	return b.String()
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// cell keeps text from breaking a table row or the markdown around it.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.TrimSpace(s)
}

// errorLines keeps the first lines of an error, each cut to a readable
// length: the comment points at the deployment for the rest.
func errorLines(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	more := len(lines) > commentErrorLines
	if more {
		lines = lines[:commentErrorLines]
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > commentLineMaxRunes {
			lines[i] = string(r[:commentLineMaxRunes]) + "…"
		}
	}
	if more {
		lines = append(lines, "…")
	}
	return strings.Join(lines, "\n")
}

// codeFence returns a backtick fence longer than any run of backticks in
// s, so error output cannot close the block early.
func codeFence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
