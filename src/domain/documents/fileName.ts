/**
 * An uploaded file's name as the API keeps and shows it. The name is the client's and only ever
 * displayed (the stored file is named by the document's id), so it is bounded and kept to the text
 * rule rather than cleaned up in ways a person would not recognise.
 */
import { textIssue } from '../text/textRule.ts';

/** The longest file name kept, in characters (code points): what common file systems allow. */
export const FILE_NAME_MAX_CHARACTERS = 255;

export type FileNameResult = { ok: true; fileName: string | null } | { ok: false; message: string };

/**
 * The display name of an upload: exactly what the client sent (a path in it stays as sent: the name
 * is never used to name a file), null when it sent none. Refused when it breaks the text rule or is
 * too long, never cut: what is acknowledged is what is read back.
 */
export function displayFileName(sent: string | null): FileNameResult {
  if (sent === null) return { ok: true, fileName: null };
  const text = textIssue(sent);
  if (text) return { ok: false, message: `the file name ${text}` };
  if ([...sent].length > FILE_NAME_MAX_CHARACTERS) return { ok: false, message: `the file name must be at most ${FILE_NAME_MAX_CHARACTERS} characters` };
  return { ok: true, fileName: sent === '' ? null : sent };
}
