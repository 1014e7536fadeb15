/** Invitations to an account's team: a one-time link, valid for seven days. */
export const INVITATION_VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;

export interface InvitationState {
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
}

/** Why an invitation can no longer be used, or null when it can. */
export function invitationClosedReason(invitation: InvitationState, now: number): string | null {
  if (invitation.acceptedAt) return 'has already been used';
  if (invitation.revokedAt) return 'was withdrawn by an admin';
  if (now >= Date.parse(invitation.expiresAt)) return 'has expired (invitations are valid for 7 days)';
  return null;
}
