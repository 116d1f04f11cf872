// The header gatehouse's own git sends to a forge's HTTPS remote: the token as each forge takes
// it for git over HTTP. Given to one git process in its environment, never written to disk.
import type { PullRequestConfig } from '../config/schema.js';

const basic = (user: string, password: string) =>
  `Authorization: Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export function gitAuthFor(pr: PullRequestConfig): { header: string } {
  switch (pr.provider) {
    case 'github':
      return { header: basic('x-access-token', pr.token) };
    case 'gitlab':
      return { header: basic('oauth2', pr.token) };
    case 'gitea':
      // Gitea takes a token as the user name when the password says so.
      return { header: basic(pr.token, 'x-oauth-basic') };
  }
}
