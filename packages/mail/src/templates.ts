/**
 * The mails the service sends (extensions-2.md 2): each one a subject, a text part and an HTML
 * part, rendered by a pure function from what the caller passes in. Links are built on APP_URL
 * (`appUrl`, without a trailing slash). Every value put into the HTML is escaped; text chosen by
 * another user (a workspace name, a display name) is also cleaned by `userText`, because it goes
 * out from our domain to someone who never asked for it.
 */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** The product as mails name it. */
export const PRODUCT_NAME = 'Social-data extraction';

/** How much of a name chosen by another user a mail shows. */
export const USER_TEXT_MAX = 60;

/** Escapes text for HTML content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A word that a mail client might turn into a link: a scheme, `www.`, an address or a domain. */
const LINK_LIKE = /\S*(?:[a-z][a-z0-9+.-]*:\/\/|www\.|@|[\p{L}\p{N}-]\.[\p{L}]{2,})\S*/giu;

/**
 * Text from another user, flattened to one plain line: control, format (bidi overrides,
 * zero-width), private-use and separator characters removed, whitespace collapsed, at most
 * `max` characters.
 */
export function plainText(value: string, max: number): string {
  const cleaned = value
    .normalize('NFKC')
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...cleaned];
  return chars.length > max
    ? `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`
    : cleaned;
}

/**
 * A name chosen by another user, made safe to quote in a mail: `plainText`, with anything that
 * reads as a link or address defanged (`example[.]com`, `https[:]//`, `a[@]b`) so that no client
 * turns it into something to click, then cut to USER_TEXT_MAX characters.
 * The mails also say who chose it.
 */
export function userText(value: string, max = USER_TEXT_MAX): string {
  const defanged = plainText(value, Infinity).replace(LINK_LIKE, (word) =>
    word.replace(/:\/\//g, '[:]//').replace(/@/g, '[@]').replace(/\./g, '[.]'),
  );
  return plainText(defanged, max);
}

/** A UTC time as mails show it: `2026-12-01 09:00 UTC`. */
export function mailTime(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Paragraphs of HTML (each already escaped) in the one layout every mail shares. */
function layout(title: string, paragraphs: string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>' + escapeHtml(title) + '</title></head>',
    '<body style="font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; font-size: 15px; line-height: 1.5; color: #1f2328; max-width: 560px; margin: 0 auto; padding: 24px;">',
    ...paragraphs.map((p) => `<p>${p}</p>`),
    `<p style="color: #656d76; font-size: 13px;">${escapeHtml(PRODUCT_NAME)}</p>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** A button-like link; `href` is escaped here. */
function button(href: string, label: string): string {
  return `<a href="${escapeHtml(href)}" style="display: inline-block; padding: 10px 18px; background: #1f6feb; color: #ffffff; text-decoration: none; border-radius: 6px;">${escapeHtml(label)}</a>`;
}

/** The link itself, for clients that show no buttons (and to copy). */
function plainLink(href: string): string {
  return `If the button does not work, open this address:<br><a href="${escapeHtml(href)}">${escapeHtml(href)}</a>`;
}

function text(lines: string[]): string {
  return `${lines.join('\n')}\n\n-- \n${PRODUCT_NAME}\n`;
}

/** The email verification link of a sign-up: `{appUrl}/console/verify?token=…`, valid 24 hours, once. */
export function verificationMail({ appUrl, token }: { appUrl: string; token: string }): RenderedMail {
  const link = `${appUrl}/console/verify?token=${encodeURIComponent(token)}`;
  const subject = `Verify your email for ${PRODUCT_NAME}`;
  return {
    subject,
    text: text([
      'Welcome! Confirm that this is your email address to finish signing up:',
      '',
      link,
      '',
      'The link is valid for 24 hours and works once.',
      'If you did not sign up, ignore this mail: no account is activated without it.',
    ]),
    html: layout(subject, [
      'Welcome! Confirm that this is your email address to finish signing up.',
      button(link, 'Verify my email'),
      plainLink(link),
      'The link is valid for 24 hours and works once. If you did not sign up, ignore this mail: no account is activated without it.',
    ]),
  };
}

/** Someone tried to sign up with an email that has an account already (sign-up answers alike either way). */
export function signupAttemptMail({ appUrl }: { appUrl: string }): RenderedMail {
  const signIn = `${appUrl}/console/login`;
  const reset = `${appUrl}/console/reset`;
  const subject = `Someone tried to sign up with your email on ${PRODUCT_NAME}`;
  return {
    subject,
    text: text([
      'Someone tried to sign up with this email address, which already has an account.',
      '',
      `If it was you, sign in instead: ${signIn}`,
      `If you forgot your password, reset it: ${reset}`,
      '',
      'If it was not you, you need not do anything: your account is unchanged.',
    ]),
    html: layout(subject, [
      'Someone tried to sign up with this email address, which already has an account.',
      `If it was you, <a href="${escapeHtml(signIn)}">sign in</a> instead, or <a href="${escapeHtml(reset)}">reset your password</a> if you forgot it.`,
      'If it was not you, you need not do anything: your account is unchanged.',
    ]),
  };
}

/** A password reset link: `{appUrl}/console/reset?token=…`, valid 1 hour, once. */
/** The console's page that redeems a password-reset token. */
export function passwordResetLink({ appUrl, token }: { appUrl: string; token: string }): string {
  return `${appUrl}/console/reset?token=${encodeURIComponent(token)}`;
}

export function passwordResetMail({ appUrl, token }: { appUrl: string; token: string }): RenderedMail {
  const link = passwordResetLink({ appUrl, token });
  const subject = `Reset your ${PRODUCT_NAME} password`;
  return {
    subject,
    text: text([
      'Someone (we hope you) asked to reset the password of this account. Choose a new one here:',
      '',
      link,
      '',
      'The link is valid for 1 hour and works once. Resetting the password signs you out everywhere.',
      'If you did not ask for it, ignore this mail: your password is unchanged.',
    ]),
    html: layout(subject, [
      'Someone (we hope you) asked to reset the password of this account.',
      button(link, 'Choose a new password'),
      plainLink(link),
      'The link is valid for 1 hour and works once. Resetting the password signs you out everywhere. If you did not ask for it, ignore this mail: your password is unchanged.',
    ]),
  };
}

/** The password of the account was changed (or reset): a notice, with the way back in if it was not the owner. */
export function passwordChangedMail({ appUrl, at }: { appUrl: string; at: Date }): RenderedMail {
  const reset = `${appUrl}/console/reset`;
  const subject = `Your ${PRODUCT_NAME} password was changed`;
  return {
    subject,
    text: text([`The password of this account was changed at ${mailTime(at)}.`, '', `If that was not you, reset it now: ${reset}`]),
    html: layout(subject, [
      `The password of this account was changed at ${escapeHtml(mailTime(at))}.`,
      `If that was not you, <a href="${escapeHtml(reset)}">reset it now</a>.`,
    ]),
  };
}

export interface InvitationMailInput {
  appUrl: string;
  /** Chosen by the inviter: shown quoted, cleaned by `userText` and said to be theirs. */
  workspaceName: string;
  /** The inviter's email (the account that sent the invitation); null for an API key that no user made. */
  inviterEmail: string | null;
  /** The inviter's display name, when they set one (cleaned like the workspace name). */
  inviterName?: string | null;
  role: string;
  /** `{appUrl}/console/invitations/accept?token=…` */
  acceptUrl: string;
  expiresAt: Date;
}

/**
 * An invitation into a workspace. The only text of the inviter's choosing is the workspace's
 * name and their display name: both quoted, cleaned (`userText`) and attributed, the subject
 * names neither, and the inviter's email is always shown, so the mail cannot be made to read
 * as a message from us.
 */
export function invitationMail(input: InvitationMailInput): RenderedMail {
  const workspace = userText(input.workspaceName);
  const inviterEmail = input.inviterEmail ? plainText(input.inviterEmail, 254) : null;
  const name = input.inviterName ? userText(input.inviterName) : '';
  const inviter = !inviterEmail ? 'An API key of the workspace' : name ? `"${name}" <${inviterEmail}>` : inviterEmail;
  const role = plainText(input.role, 20);
  const expires = mailTime(input.expiresAt);
  const subject = `You are invited to a workspace on ${PRODUCT_NAME}`;
  return {
    subject,
    text: text([
      `${inviter} invited you to join a workspace on ${PRODUCT_NAME} with the role ${role}.`,
      '',
      `Workspace name, as the inviter chose it: "${workspace}"`,
      '',
      'Accept the invitation (sign in or sign up with this email address first):',
      input.acceptUrl,
      '',
      `The invitation expires at ${expires}.`,
      'If you do not know the inviter, ignore this mail: nothing happens unless you accept.',
    ]),
    html: layout(subject, [
      `<strong>${escapeHtml(inviter)}</strong> invited you to join a workspace on ${escapeHtml(PRODUCT_NAME)} with the role <strong>${escapeHtml(role)}</strong>.`,
      `Workspace name, as the inviter chose it: “<strong>${escapeHtml(workspace)}</strong>”`,
      button(input.acceptUrl, 'Accept the invitation'),
      plainLink(input.acceptUrl),
      `Sign in or sign up with this email address first. The invitation expires at ${escapeHtml(expires)}. If you do not know the inviter, ignore this mail: nothing happens unless you accept.`,
    ]),
  };
}

/** The billing events mailed to a workspace's owners and admins (extensions-2.md 1). */
export type BillingMailType =
  | 'billing.payment_succeeded'
  | 'billing.payment_refunded'
  | 'billing.credits_low'
  | 'billing.spend_cap_reached'
  | 'billing.auto_recharge_failed'
  | 'billing.plan_changed'
  | 'billing.invoice_payment_failed';

const BILLING_SUBJECTS: Record<BillingMailType, string> = {
  'billing.payment_succeeded': 'Payment received: credits added',
  'billing.payment_refunded': 'A payment was refunded',
  'billing.credits_low': 'Your credits are running low',
  'billing.spend_cap_reached': 'A monthly spend cap was reached',
  'billing.auto_recharge_failed': 'Auto-recharge failed and was turned off',
  'billing.plan_changed': 'Your plan changed',
  'billing.invoice_payment_failed': 'A plan invoice could not be paid',
};

export interface BillingMailInput {
  appUrl: string;
  type: BillingMailType;
  /** Chosen by a member: shown quoted and cleaned by `userText`. */
  workspaceName: string;
  /** The event's one sentence, written by the service. */
  message: string;
}

/** A billing event, told to an owner or admin of the workspace, with a link to its Billing page. */
export function billingMail(input: BillingMailInput): RenderedMail {
  const workspace = userText(input.workspaceName);
  const link = `${input.appUrl}/console/billing`;
  const subject = `${BILLING_SUBJECTS[input.type]} (${PRODUCT_NAME})`;
  const message = plainText(input.message, 500);
  return {
    subject,
    text: text([
      `Workspace: "${workspace}"`,
      '',
      message,
      '',
      `See the workspace's billing: ${link}`,
      '',
      'You receive this mail as an owner or admin of the workspace.',
    ]),
    html: layout(subject, [
      `Workspace: “<strong>${escapeHtml(workspace)}</strong>”`,
      escapeHtml(message),
      button(link, 'Open billing'),
      plainLink(link),
      'You receive this mail as an owner or admin of the workspace.',
    ]),
  };
}
