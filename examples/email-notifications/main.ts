/**
 * Runs the email notifier: `node examples/email-notifications/main.ts` with the settings below in
 * the environment (see README.md beside this file).
 */
import { createNotifier } from './notifier.ts';

function setting(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') {
    console.error(`set ${name} (see examples/email-notifications/README.md)`);
    process.exit(2);
  }
  return value;
}

const server = createNotifier({
  baseUrl: setting('MOS_BASE_URL', 'http://127.0.0.1:3000'),
  apiKey: setting('MOS_API_KEY'),
  webhookSecret: setting('MOS_WEBHOOK_SECRET'),
  smtp: { host: setting('SMTP_HOST', '127.0.0.1'), port: Number(setting('SMTP_PORT', '2525')) },
  from: setting('MAIL_FROM', 'Mortgage team <mortgages@example.test>'),
});
const port = Number(setting('PORT', '9100'));
server.listen(port, '127.0.0.1', () => console.log(`email notifier listening on http://127.0.0.1:${port}/`));
