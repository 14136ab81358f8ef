/** What the sign-in link's page shows: a status, a heading, what happened, and perhaps the confirm form. */
export interface SignInPage {
  status: number;
  title: string;
  paragraphs: string[];
  /** Facts shown as a list (what is being confirmed). */
  facts?: [string, string][];
  /** A token: the page holds the form that confirms it. */
  confirm_token?: string;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * A small self-contained page: no script, no external resource (the CSP says so); confirming
 * POSTs the same URL (the token in its query, no body), so a mail scanner that fetches links
 * (GET) never uses one up.
 */
export function renderSignInPage(page: SignInPage): string {
  const facts = page.facts?.length ? `<dl>${page.facts.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>` : '';
  const form = page.confirm_token
    ? `<form method="post" action="verify?token=${encodeURIComponent(page.confirm_token)}"><button type="submit">Confirm sign-in</button></form>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · Arbor</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d2a1f}h1{font-size:1.4rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#5b6b5e}dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}button{font:inherit;padding:.5rem 1.2rem;border:0;border-radius:.4rem;background:#2f6b3a;color:#fff;cursor:pointer}</style>
</head><body><h1>${escapeHtml(page.title)}</h1>
${page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
${facts}${form}
</body></html>
`;
}
