/** Time-zone helpers on the browser's Intl: the zones to pick from, and wall times in a zone. */
export function timeZones(): string[] {
  const intl = Intl as typeof Intl & { supportedValuesOf?: (key: string) => string[] };
  const zones = intl.supportedValuesOf?.('timeZone') ?? [];
  return zones.includes('UTC') ? zones : ['UTC', ...zones];
}

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** The wall time ('YYYY-MM-DDTHH:mm') of an instant in a zone. */
export function wallTime(instant: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/** Minutes the zone is ahead of UTC at an instant. */
function offsetMinutes(instant: Date, zone: string): number {
  const wall = Date.parse(`${wallTime(instant, zone)}:00Z`);
  return Math.round((wall - Math.floor(instant.getTime() / 60_000) * 60_000) / 60_000);
}

/** A wall time in a zone as an ISO 8601 instant with that zone's offset ('2026-10-23T09:00:00+02:00'). */
export function zonedIso(wall: string, zone: string): string {
  const asUtc = Date.parse(`${wall}:00Z`);
  let offset = offsetMinutes(new Date(asUtc), zone);
  offset = offsetMinutes(new Date(asUtc - offset * 60_000), zone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${wall}:00${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** An instant shown in a zone, with the weekday and the zone's abbreviation or offset. */
export function inZone(iso: string, zone: string): string {
  return new Date(iso).toLocaleString(undefined, {
    timeZone: zone,
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
}
