/**
 * The changelog page (/docs/changelog): every version, newest first, with the changes it brought,
 * written from the change modules (src/domain/versions/changes/), so it cannot drift from what the
 * service does. Each version links to its reference and its frozen contract.
 */
import { CHANGES, FIRST_VERSION, VERSIONS } from '../domain/versions/registry.ts';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** `code` spans of the descriptions as <code>. */
const inline = (text: string) => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

let page: string | undefined;

export function changelogPage(): string {
  page ??= render();
  return page;
}

function render(): string {
  const sections = [...VERSIONS].reverse().map((version) => {
    const changes = CHANGES.filter((change) => change.version === version);
    const items =
      version === FIRST_VERSION
        ? '<li>The first release: quotes, applications, documents, bank verification, exports and the events application.approved and document.uploaded.</li>'
        : changes.map((change) => `<li id="${escape(change.name)}">${inline(change.description)}</li>`).join('\n        ');
    return `    <section>
      <h2 id="${version}">${version}</h2>
      <p><a href="/docs?version=${version}">Reference</a> · <a href="/openapi.json?version=${version}">OpenAPI document</a></p>
      <ul>
        ${items}
      </ul>
    </section>`;
  });
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Mortgage Origination API changelog</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
  </head>
  <body>
    <h1>API changelog</h1>
    <p>Each version is a date. Send <code>Mos-Version: &lt;date&gt;</code> to be answered in one; without it, your account's pinned version applies.</p>
${sections.join('\n')}
  </body>
</html>
`;
}
