/**
 * Email notifications, as a partner app built only on the SDK: a webhook receiver that verifies
 * each delivery (Standard Webhooks, the endpoint's `whsec_…` secret), looks the application up for
 * the applicant's email, and sends the applicant a notification through SMTP (nodemailer).
 *
 * The events it writes about are in TEMPLATES: `application.approved` today; the application
 * events of issue 29 (referral, decline, clear to close) by name, once the service sends them.
 * Deliveries are at least once: a delivery id already handled is answered 200 and not mailed again.
 */
import http from 'node:http';
import nodemailer from 'nodemailer';
import { createMortgageClient, verifyWebhook, WebhookVerificationError } from '../../sdk/src/index.ts';

export interface NotifierOptions {
  /** The service's base URL and an API key of the environment the webhook endpoint belongs to. */
  baseUrl: string;
  apiKey: string;
  /** The endpoint's signing secret (`whsec_…`), shown when it was registered. */
  webhookSecret: string;
  smtp: { host: string; port: number; secure?: boolean; auth?: { user: string; pass: string } };
  from: string;
}

interface Template {
  subject: (mortgageId: string) => string;
  text: (name: string, mortgageId: string) => string;
}

/** What the applicant is told, by event kind. */
const TEMPLATES: Record<string, Template> = {
  'application.approved': {
    subject: (id) => `Your mortgage application ${id} is approved`,
    text: (name, id) => `Dear ${name},\n\nyour mortgage application ${id} has been approved. We will be in touch about the next steps.\n`,
  },
  'application.referred': {
    subject: (id) => `Your mortgage application ${id} is being reviewed`,
    text: (name, id) => `Dear ${name},\n\nyour mortgage application ${id} has been referred to an underwriter, who will review it shortly.\n`,
  },
  'application.declined': {
    subject: (id) => `Your mortgage application ${id}`,
    text: (name, id) => `Dear ${name},\n\nwe are sorry: your mortgage application ${id} has been declined.\n`,
  },
  'application.clear_to_close': {
    subject: (id) => `Your mortgage application ${id} is clear to close`,
    text: (name, id) => `Dear ${name},\n\nevery condition of your mortgage application ${id} is met: it is clear to close.\n`,
  },
};

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The receiver as an HTTP server (not yet listening). */
export function createNotifier(options: NotifierOptions): http.Server {
  const client = createMortgageClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const mailer = nodemailer.createTransport({ ...options.smtp, secure: options.smtp.secure ?? false, ignoreTLS: !options.smtp.secure });
  const handled = new Set<string>();

  async function handle(body: string, headers: http.IncomingHttpHeaders): Promise<number> {
    let event;
    try {
      event = verifyWebhook(options.webhookSecret, body, headers);
    } catch (err) {
      if (err instanceof WebhookVerificationError) return 401;
      throw err;
    }
    const deliveryId = String(headers['webhook-id']);
    const template = TEMPLATES[event.event];
    if (!template || !('mortgageId' in event) || typeof event.mortgageId !== 'string' || handled.has(deliveryId)) return 200;
    const { data: application } = await client.api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: event.mortgageId } } });
    const email = application?.applicant.email;
    if (application && email) {
      await mailer.sendMail({
        from: options.from,
        to: email,
        subject: template.subject(application.mortgageId),
        text: template.text(application.applicant.name, application.mortgageId),
      });
    }
    handled.add(deliveryId);
    return 200;
  }

  return http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    readBody(req)
      .then((body) => handle(body, req.headers))
      // A failure (the API or the SMTP server unreachable) answers 500: the service retries the delivery.
      .catch(() => 500)
      .then((status) => res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status === 200 ? 'ok' : 'not handled'));
  });
}
