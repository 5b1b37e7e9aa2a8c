const secretParameters = /^(password|pass|pwd|secret|token|api[_-]?key|sslpassword|sslkey)$/i;

/**
 * A database spec fit for logs and messages: the user name and password of a URL become `***`,
 * and so do query parameters that carry secrets (`?password=`). Plain paths come back unchanged.
 *
 * @example
 * redactConnectionString('postgres://cadre:hunter2@db:5432/cadre') // 'postgres://***@db:5432/cadre'
 */
export function redactConnectionString(spec: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) return spec;
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    // Not a URL we can parse: cut everything between the scheme and the last '@' of the authority.
    return spec.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@');
  }
  if (url.username !== '' || url.password !== '') {
    url.username = '***';
    url.password = '';
  }
  for (const name of [...url.searchParams.keys()]) {
    if (secretParameters.test(name)) url.searchParams.set(name, '***');
  }
  return url.toString();
}
