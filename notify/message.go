package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// fact is one labelled line of a message.
type fact struct{ label, value string }

// facts are what a message says beside its title, in order.
func (e Event) facts() []fact {
	var out []fact
	add := func(label, value string) {
		if value != "" {
			out = append(out, fact{label, value})
		}
	}
	add("Application", e.ApplicationName)
	env := e.EnvironmentName
	if e.Preview && env != "" {
		env += " (preview)"
	}
	add("Environment", env)
	add("Deployment", e.DeploymentID)
	add("Service", e.Service)
	add("Hostname", e.Hostname)
	add("Job", e.Job)
	add("Backup", e.Backup)
	add("Error code", e.Code)
	add("Message", e.Message)
	if e.Since != nil {
		add("Unhealthy since", e.Since.UTC().Format(time.RFC3339))
	}
	if e.ExpiresAt != nil {
		add("Expires", e.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return out
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// WebhookBody is the generic webhook's JSON: the event's fields, its
// title and the delivery's id (also in the X-Slipway-Delivery header, so
// a receiver can drop a delivery it saw already).
type WebhookBody struct {
	DeliveryID string `json:"delivery_id"`
	Title      string `json:"title"`
	Event
}

func webhookBody(deliveryID string, e Event) ([]byte, error) {
	return json.Marshal(WebhookBody{DeliveryID: deliveryID, Title: e.Title(), Event: e})
}

// Slack incoming webhook message: text is the notification's fallback,
// blocks what the channel shows (Block Kit: header, section, context).
type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Slack's limits: a header's text 150 characters, a section's 3000.
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
)

// slackEscape escapes what mrkdwn reads as markup: &, < and > (so a
// message cannot ping @channel or forge a link).
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func slackBody(e Event) ([]byte, error) {
	title := e.Title()
	var lines []string
	for _, f := range e.facts() {
		lines = append(lines, "*"+f.label+":* "+slackEscape(f.value))
	}
	m := slackMessage{
		Text:   slackEscape(title),
		Blocks: []slackBlock{{Type: "header", Text: &slackText{Type: "plain_text", Text: clip(title, slackHeaderMax)}}},
	}
	if len(lines) > 0 {
		m.Blocks = append(m.Blocks, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: clip(strings.Join(lines, "\n"), slackSectionMax)}})
	}
	if e.URL != "" {
		m.Blocks = append(m.Blocks, slackBlock{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: "<" + slackEscape(e.URL) + "|Open in Slipway>"}}})
	}
	return json.Marshal(m)
}

// Discord execute-webhook body: one embed, no mentions parsed.
type discordMessage struct {
	Username        string          `json:"username"`
	Content         string          `json:"content,omitempty"`
	Embeds          []discordEmbed  `json:"embeds"`
	AllowedMentions discordMentions `json:"allowed_mentions"`
}

type discordEmbed struct {
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	URL         string         `json:"url,omitempty"`
	Color       int            `json:"color"`
	Timestamp   string         `json:"timestamp"`
	Fields      []discordField `json:"fields,omitempty"`
}

type discordField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

// discordMentions with an empty parse list: no @everyone, no role pings.
type discordMentions struct {
	Parse []string `json:"parse"`
}

// Discord's limits: title 256, description 4096, field name 256, value
// 1024, 25 fields.
const (
	discordTitleMax = 256
	discordValueMax = 1024
	discordFields   = 25
	colorBad        = 0xD93F0B
	colorGood       = 0x2DA44E
)

func discordBody(e Event) ([]byte, error) {
	embed := discordEmbed{
		Title: clip(e.Title(), discordTitleMax), URL: e.URL, Color: colorGood,
		Timestamp: e.At.UTC().Format(time.RFC3339),
	}
	if e.Kind.Bad() {
		embed.Color = colorBad
	}
	for _, f := range e.facts() {
		if len(embed.Fields) == discordFields {
			break
		}
		embed.Fields = append(embed.Fields, discordField{Name: f.label, Value: clip(f.value, discordValueMax), Inline: len(f.value) <= 40})
	}
	return json.Marshal(discordMessage{
		Username: "Slipway", Embeds: []discordEmbed{embed}, AllowedMentions: discordMentions{Parse: []string{}},
	})
}

// mailText is the e-mail's subject and plain-text body.
func mailText(e Event) (subject, body string) {
	var b strings.Builder
	b.WriteString(e.Title())
	b.WriteString("\n\n")
	for _, f := range e.facts() {
		fmt.Fprintf(&b, "%s: %s\n", f.label, f.value)
	}
	if e.URL != "" {
		fmt.Fprintf(&b, "\nOpen in Slipway: %s\n", e.URL)
	}
	b.WriteString("\n-- \nSlipway notifications. Change what this destination receives on the Notifications page.\n")
	return "[Slipway] " + e.Title(), b.String()
}
