import {
  escapeHtml,
  invitationMail,
  passwordChangedMail,
  passwordResetMail,
  signupAttemptMail,
  userText,
  USER_TEXT_MAX,
  verificationMail,
} from '../src';

/** extensions-2.md 2: every mail has a text and an HTML part, and its links are built on APP_URL. */
const appUrl = 'https://app.example.com';
const token = 'a+b/c=d&e<f';

describe('mail templates', () => {
  it('verification: the link on APP_URL with the token encoded, 24 hours, in both parts', () => {
    const mail = verificationMail({ appUrl, token });
    const link = `${appUrl}/console/verify?token=${encodeURIComponent(token)}`;
    expect(mail.subject).toMatch(/verify/i);
    expect(mail.text).toContain(link);
    expect(mail.text).toContain('24 hours');
    expect(mail.html).toContain(`href="${escapeHtml(link)}"`);
    expect(mail.html).not.toContain(token);
  });

  it('password reset: the link on APP_URL, 1 hour, single use', () => {
    const mail = passwordResetMail({ appUrl, token: 'tok_123' });
    expect(mail.text).toContain(`${appUrl}/console/reset?token=tok_123`);
    expect(mail.text).toMatch(/1 hour/);
    expect(mail.text).toMatch(/once/);
    expect(mail.html).toContain(`href="${appUrl}/console/reset?token=tok_123"`);
  });

  it('sign-up attempt: no token, and the ways in (sign in, reset)', () => {
    const mail = signupAttemptMail({ appUrl });
    expect(mail.text.toLowerCase()).toContain('sign up');
    expect(mail.text).toContain(`${appUrl}/console/reset`);
    expect(mail.text).not.toContain('token=');
    expect(mail.html).toContain(`href="${appUrl}/console/reset"`);
  });

  it('password changed: when, and the way back', () => {
    const mail = passwordChangedMail({ appUrl, at: new Date('2026-11-27T10:15:00Z') });
    expect(mail.text).toContain('2026-11-27 10:15 UTC');
    expect(mail.html).toContain(`${appUrl}/console/reset`);
  });

  it('every mail is a full HTML document with a text twin', () => {
    for (const mail of [
      verificationMail({ appUrl, token }),
      passwordResetMail({ appUrl, token }),
      signupAttemptMail({ appUrl }),
      invitationMail(invitation('Crew')),
    ]) {
      expect(mail.html).toMatch(/^<!doctype html>/);
      expect(mail.html).toContain('</html>');
      expect(mail.text.length).toBeGreaterThan(50);
      expect(mail.text).not.toMatch(/<[a-z]/i);
    }
  });
});

function invitation(workspaceName: string, inviterName: string | null = null) {
  return {
    appUrl,
    workspaceName,
    inviterEmail: 'olga@example.com',
    inviterName,
    role: 'member',
    acceptUrl: `${appUrl}/console/invitations/accept?token=tok_abc`,
    expiresAt: new Date('2026-12-01T09:00:00Z'),
  };
}

describe('invitation mail: a name chosen by the inviter cannot speak for us', () => {
  it('names the inviter, quotes the workspace name as theirs, gives the link and the expiry', () => {
    const mail = invitationMail(invitation('Crew', 'Olga'));
    expect(mail.text).toContain('"Olga" <olga@example.com> invited you');
    expect(mail.text).toContain('Workspace name, as the inviter chose it: "Crew"');
    expect(mail.text).toContain(`${appUrl}/console/invitations/accept?token=tok_abc`);
    expect(mail.text).toContain('2026-12-01 09:00 UTC');
    expect(mail.html).toContain('&quot;Olga&quot; &lt;olga@example.com&gt;');
    expect(mail.subject).not.toContain('Crew');
  });

  it('escapes HTML in the workspace name and the inviter name', () => {
    const mail = invitationMail(invitation('<img src=x onerror=alert(1)> & "co"', '<b>Boss</b>'));
    expect(mail.html).not.toContain('<img');
    expect(mail.html).not.toContain('<b>Boss');
    expect(mail.html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;co&quot;');
  });

  it('defangs links and addresses, strips control and bidi characters, and truncates', () => {
    const hostile =
      'Your account is locked!\r\n\u202eVisit https://evil.example/login or www.evil.example or mail help@evil.example now ' +
      'x'.repeat(100);
    const mail = invitationMail(invitation(hostile));
    for (const part of [mail.text, mail.html, mail.subject]) {
      expect(part).not.toContain('https://evil');
      expect(part).not.toContain('evil.example');
      expect(part).not.toContain('www.evil');
      expect(part).not.toContain('help@evil');
      expect(part).not.toContain('\u202e');
    }
    const shown = userText(hostile);
    expect([...shown].length).toBeLessThanOrEqual(USER_TEXT_MAX);
    expect(shown.endsWith('…')).toBe(true);
    expect(shown).not.toMatch(/[\r\n]/);
    expect(mail.text).toContain(`"${shown}"`);
  });

  it('keeps an ordinary name as it is', () => {
    expect(userText('Acme Inc. — Research (EU)')).toBe('Acme Inc. — Research (EU)');
    expect(userText('  Data   team ')).toBe('Data team');
    expect(userText('acme.io')).toBe('acme[.]io');
  });

  it('an invitation made with an API key says so', () => {
    const mail = invitationMail({ ...invitation('Crew'), inviterEmail: null });
    expect(mail.text).toMatch(/^An API key of the workspace invited you/);
  });
});
