package api

import "github.com/gofiber/fiber/v2"

func (h *handler) secretList(c *fiber.Ctx) error {
	a, svc, done, err := h.secretRequest(c, nil)
	if done {
		return err
	}
	list, err := svc.List(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return h.secretFail(c, err)
	}
	names, err := h.environmentNames(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	out := SecretList{Secrets: make([]Secret, 0, len(list))}
	for _, s := range list {
		out.Secrets = append(out.Secrets, newSecret(s, names))
	}
	return c.JSON(out)
}
