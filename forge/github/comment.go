package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v88/github"
)

// Marker is the hidden HTML comment that identifies the one comment
// Slipway keeps on a pull request for an application, so it is found and
// updated even when the stored comment id is lost.
func Marker(applicationID string) string {
	return "<!-- slipway:app=" + applicationID + " -->"
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID    int64
	Body  string
	Login string
}

// ListComments returns every comment of the pull request (or issue).
func (c *Client) ListComments(ctx context.Context, installationID int64, fullName string, number int) ([]Comment, error) {
	cl, owner, repo, err := c.repoClient(installationID, fullName)
	if err != nil {
		return nil, err
	}
	var out []Comment
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		page, resp, err := cl.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of %s#%d: %w", fullName, number, err)
		}
		for _, cm := range page {
			out = append(out, Comment{ID: cm.GetID(), Body: cm.GetBody(), Login: cm.GetUser().GetLogin()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// CreateComment posts a comment and returns its id.
func (c *Client) CreateComment(ctx context.Context, installationID int64, fullName string, number int, body string) (int64, error) {
	cl, owner, repo, err := c.repoClient(installationID, fullName)
	if err != nil {
		return 0, err
	}
	cm, _, err := cl.Issues.CreateComment(ctx, owner, repo, number, &gh.IssueComment{Body: &body})
	if err != nil {
		return 0, fmt.Errorf("comment on %s#%d: %w", fullName, number, err)
	}
	return cm.GetID(), nil
}

// errCommentGone is UpdateComment's answer when the comment was deleted.
type errCommentGone struct{ id int64 }

func (e errCommentGone) Error() string { return "comment " + strconv.FormatInt(e.id, 10) + " is gone" }

// UpdateComment replaces a comment's body.
func (c *Client) UpdateComment(ctx context.Context, installationID int64, fullName string, commentID int64, body string) error {
	cl, owner, repo, err := c.repoClient(installationID, fullName)
	if err != nil {
		return err
	}
	_, resp, err := cl.Issues.EditComment(ctx, owner, repo, commentID, &gh.IssueComment{Body: &body})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return errCommentGone{commentID}
		}
		return fmt.Errorf("update comment %d on %s: %w", commentID, fullName, err)
	}
	return nil
}

// UpsertComment keeps exactly one comment of the application on the pull
// request: it updates knownID when given (and still there), else the
// comment carrying the application's Marker, else creates one. body must
// contain the marker (RenderComment's output does). It returns the
// comment's id for the caller to store.
func (c *Client) UpsertComment(ctx context.Context, installationID int64, fullName string, number int, applicationID string, knownID int64, body string) (int64, error) {
	marker := Marker(applicationID)
	if !strings.Contains(body, marker) {
		body = marker + "\n" + body
	}
	if knownID != 0 {
		err := c.UpdateComment(ctx, installationID, fullName, knownID, body)
		if err == nil {
			return knownID, nil
		}
		if _, gone := err.(errCommentGone); !gone {
			return 0, err
		}
	}
	comments, err := c.ListComments(ctx, installationID, fullName, number)
	if err != nil {
		return 0, err
	}
	for _, cm := range comments {
		if cm.ID != knownID && strings.Contains(cm.Body, marker) {
			if err := c.UpdateComment(ctx, installationID, fullName, cm.ID, body); err != nil {
				return 0, err
			}
			return cm.ID, nil
		}
	}
	return c.CreateComment(ctx, installationID, fullName, number, body)
}

// Commit status states.
const (
	StatePending = "pending"
	StateSuccess = "success"
	StateFailure = "failure"
	StateError   = "error"
)

// Status is a commit status.
type Status struct {
	State       string // StatePending, StateSuccess, StateFailure or StateError
	Context     string // StatusContext(app name)
	Description string // at most 140 characters; longer is cut
	TargetURL   string // the deployment in the dashboard
}

// StatusContext is the status context of an application: slipway/<app>.
func StatusContext(appName string) string { return "slipway/" + appName }

// CreateStatus sets a commit status on sha.
func (c *Client) CreateStatus(ctx context.Context, installationID int64, fullName, sha string, s Status) error {
	cl, owner, repo, err := c.repoClient(installationID, fullName)
	if err != nil {
		return err
	}
	desc := s.Description
	if r := []rune(desc); len(r) > 140 {
		desc = string(r[:139]) + "…"
	}
	st := gh.RepoStatus{State: &s.State, Context: &s.Context, Description: &desc}
	if s.TargetURL != "" {
		st.TargetURL = &s.TargetURL
	}
	if _, _, err := cl.Repositories.CreateStatus(ctx, owner, repo, sha, st); err != nil {
		return fmt.Errorf("status %s on %s@%s: %w", s.Context, fullName, sha, err)
	}
	return nil
}

func (c *Client) repoClient(installationID int64, fullName string) (*gh.Client, string, string, error) {
	owner, repo, err := splitFullName(fullName)
	if err != nil {
		return nil, "", "", err
	}
	cl, err := c.installationClient(installationID)
	if err != nil {
		return nil, "", "", err
	}
	return cl, owner, repo, nil
}
