package io.github.ratelimit.gateway.http;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether a request path is in canonical form, so that the path a route predicate matched (and the limiter
 * counted) is the path every upstream will serve: no spelling of a path may escape its endpoint group.
 *
 * <p>A path is canonical when it is an origin-form path (starts with {@code /}) of printable ASCII only, with no
 * empty segment ({@code //}, except a trailing {@code /}), no dot segment ({@code .} or {@code ..}), no {@code \} or
 * {@code ;}, a well-formed percent-encoding that decodes to valid UTF-8, and no percent-encoded {@code /},
 * {@code \}, {@code .}, {@code %}, {@code ;}, control character or DEL. These are the path rules of Spring Security's
 * {@code StrictServerWebExchangeFirewall} (encoded and decoded block lists, "not normalized"), plus malformed
 * encodings and invalid UTF-8. Other percent-encoded characters (e.g. {@code %20}, {@code %61}) are allowed.
 *
 * <p>With {@link Policy#NORMALIZE} the two ambiguities that have one safe canonical form are repaired instead of
 * refused, as RFC 3986 section 6.2.2 describes: {@code %2E}/{@code %2e} is decoded to {@code .} (section 6.2.2.2),
 * dot segments are removed (section 5.2.4, {@code remove_dot_segments}: a {@code ..} above the root is dropped),
 * and empty segments are merged. Everything else that is not canonical is refused in both modes. No allocation is
 * made for a path that is already canonical.
 */
public final class RequestPathCheck {

	private static final Logger logger = LoggerFactory.getLogger(RequestPathCheck.class);

	/** What to do with a request path that is not canonical. */
	public enum Policy {

		/** Refuse it with 400 Bad Request and a problem body (the default). */
		REJECT,

		/**
		 * Repair empty segments, dot segments and encoded dots (RFC 3986 section 6.2.2), route and forward the
		 * repaired path; refuse the rest with 400.
		 */
		NORMALIZE,

		/** Route and forward every path as the client wrote it (no check: a path may escape its group). */
		ALLOW

	}

	/**
	 * The outcome of a check.
	 *
	 * @param path the path to route, limit and forward: the request's own when it was canonical, the repaired one
	 * after {@link Policy#NORMALIZE}; {@code null} when the request is refused
	 * @param problem why the path is not canonical (for the 400 answer and the debug log); {@code null} when
	 * canonical
	 */
	public record Verdict(@Nullable String path, @Nullable String problem) {

		/**
		 * Whether the request must be refused.
		 * @return {@code true} when there is no path to route
		 */
		public boolean refused() {
			return this.path == null;
		}

		/**
		 * Whether the path was repaired, i.e. the request must be routed under {@link #path()} instead of its own.
		 * @return {@code true} after {@link Policy#NORMALIZE} changed the path
		 */
		public boolean repaired() {
			return this.path != null && this.problem != null;
		}

	}

	private RequestPathCheck() {
	}

	/**
	 * What a front end does with a request before any route is matched: with {@link Policy#ALLOW} let it through
	 * unchanged; else answer {@code CONNECT} and {@code TRACE} 501, a path that is not canonical 400 (logged at
	 * DEBUG), and route the rest under the canonical path with the query's characters percent-encoded
	 * ({@link #encodedQuery}).
	 * @param method the request method
	 * @param rawPath the raw (still encoded) path, without a context path
	 * @param rawQuery the raw query, or {@code null} for none
	 * @param policy what to do with a path that is not canonical
	 * @return the admission
	 */
	public static Admission admit(String method, String rawPath, @Nullable String rawQuery, Policy policy) {
		if (policy == Policy.ALLOW) {
			return new Admission(null, false, rawPath, rawQuery);
		}
		if (method.equals("CONNECT") || method.equals("TRACE")) {
			return new Admission(RateLimitRefusal.methodNotImplemented(method), false, rawPath, rawQuery);
		}
		Verdict verdict = check(rawPath, policy);
		String path = verdict.path();
		if (path == null) { // refused
			String problem = Objects.requireNonNull(verdict.problem(), "a refused verdict names its problem");
			logger.debug("Refused a request whose path is not canonical: {}", problem);
			return new Admission(RateLimitRefusal.nonCanonicalPath(problem), false, rawPath, rawQuery);
		}
		String query = (rawQuery != null) ? encodedQuery(rawQuery) : null;
		return new Admission(null, verdict.repaired() || query != rawQuery, path, query);
	}

	/**
	 * What a front end does with a request before route matching ({@link #admit}).
	 *
	 * @param refusal the answer to write instead of routing the request; {@code null} when it is routed
	 * @param rewritten whether the request is routed under {@code path} and {@code query} rather than as received
	 * @param path the raw path to route under
	 * @param query the raw query to route with, or {@code null} for none
	 */
	public record Admission(@Nullable RateLimitRefusal refusal, boolean rewritten, String path,
			@Nullable String query) {

	}

	/**
	 * Check a request path.
	 * @param rawPath the path as the client sent it, still percent-encoded, without query (e.g.
	 * {@code URI#getRawPath()}); {@code null} or empty counts as {@code /}
	 * @param policy what to do when it is not canonical
	 * @return the verdict: canonical ({@code path} is {@code rawPath}, or {@code /} for no path; no problem),
	 * repaired, or refused
	 */
	public static Verdict check(@Nullable String rawPath, Policy policy) {
		if (rawPath == null || rawPath.isEmpty()) {
			return new Verdict("/", null);
		}
		if (policy == Policy.ALLOW) {
			return new Verdict(rawPath, null);
		}
		if (rawPath.charAt(0) != '/') {
			return refused("it does not start with '/'");
		}
		String characters = characterProblem(rawPath);
		if (characters != null) {
			return refused(characters);
		}
		String segments = segmentProblem(rawPath);
		if (segments == null) {
			return new Verdict(rawPath, null);
		}
		if (policy == Policy.REJECT) {
			return refused(segments);
		}
		return new Verdict(normalize(rawPath), segments);
	}

	/**
	 * The query with every character RFC 3986 section 3.4 does not allow in a query percent-encoded (as UTF-8),
	 * e.g. {@code [}, {@code ]}, {@code |}, {@code "} or a {@code %} not followed by two hex digits.
	 * @param rawQuery the query as sent, without {@code ?}
	 * @return {@code rawQuery} itself when it is fully encoded, else its encoded form
	 */
	public static String encodedQuery(String rawQuery) {
		int first = 0;
		while (first < rawQuery.length() && isQueryCharacter(rawQuery, first)) {
			first++;
		}
		if (first == rawQuery.length()) {
			return rawQuery;
		}
		StringBuilder encoded = new StringBuilder(rawQuery.length() + 16).append(rawQuery, 0, first);
		for (int i = first; i < rawQuery.length(); i++) {
			if (isQueryCharacter(rawQuery, i)) {
				encoded.append(rawQuery.charAt(i));
				continue;
			}
			int codePoint = rawQuery.codePointAt(i);
			if (Character.isSupplementaryCodePoint(codePoint)) {
				i++;
			}
			for (byte b : new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8)) {
				encoded.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
			}
		}
		return encoded.toString();
	}

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	/** Whether the character at {@code i} may stand in a query as it is (RFC 3986 section 3.4). */
	private static boolean isQueryCharacter(String query, int i) {
		char c = query.charAt(i);
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return true;
		}
		if (c == '%') {
			return i + 2 < query.length() && hexByte(query.charAt(i + 1), query.charAt(i + 2)) >= 0;
		}
		return "-._~!$&'()*+,;=:@/?".indexOf(c) >= 0;
	}

	private static Verdict refused(String problem) {
		return new Verdict(null, problem);
	}

	/**
	 * The first character-level problem: a character that is not printable ASCII, {@code \} or {@code ;}, a
	 * malformed percent-encoding, an encoded character that has no canonical form, or encoded bytes that are not
	 * UTF-8. Encoded dots are not a problem here (they are segment-level).
	 */
	private static @Nullable String characterProblem(String path) {
		boolean encodedHighBytes = false;
		for (int i = 0; i < path.length(); i++) {
			char c = path.charAt(i);
			if (c <= 0x20 || c >= 0x7f) {
				return "it contains a space, control or non-ASCII character";
			}
			if (c == '\\') {
				return "it contains '\\'";
			}
			if (c == ';') {
				return "it contains ';' (path parameters)";
			}
			if (c == '%') {
				int value = (i + 2 < path.length()) ? hexByte(path.charAt(i + 1), path.charAt(i + 2)) : -1;
				if (value < 0) {
					return "it contains a malformed percent-encoding";
				}
				String encoded = switch (value) {
					case '/' -> "an encoded '/' (%2F)";
					case '\\' -> "an encoded '\\' (%5C)";
					case '%' -> "an encoded '%' (%25)";
					case ';' -> "an encoded ';' (%3B)";
					default -> (value < 0x20 || value == 0x7f) ? "an encoded control character" : null;
				};
				if (encoded != null) {
					return "it contains " + encoded;
				}
				encodedHighBytes |= value >= 0x80;
				i += 2;
			}
		}
		return (encodedHighBytes && !decodesAsUtf8(path)) ? "its percent-encoded bytes are not valid UTF-8" : null;
	}

	/**
	 * The first segment-level problem: an empty segment other than a trailing one, a {@code .} or {@code ..} segment
	 * (also written with {@code %2E}), or an encoded dot anywhere.
	 */
	private static @Nullable String segmentProblem(String path) {
		int start = 1; // after the leading '/'
		while (start <= path.length()) {
			int end = path.indexOf('/', start);
			if (end < 0) {
				end = path.length();
			}
			int length = end - start;
			if (length == 0 && end < path.length()) {
				return "it contains an empty segment ('//')";
			}
			if (isDotSegment(path, start, end)) {
				return "it contains a dot segment ('.' or '..')";
			}
			start = end + 1;
		}
		return containsEncodedDot(path) ? "it contains an encoded '.' (%2E)" : null;
	}

	/** Whether {@code path[start, end)} is {@code .} or {@code ..}, each dot literal or {@code %2E}. */
	private static boolean isDotSegment(String path, int start, int end) {
		int dots = 0;
		int i = start;
		while (i < end) {
			if (path.charAt(i) == '.') {
				i++;
			}
			else if (path.startsWith("%2", i) && i + 2 < end && (path.charAt(i + 2) == 'E' || path.charAt(i + 2) == 'e')) {
				i += 3;
			}
			else {
				return false;
			}
			dots++;
		}
		return dots == 1 || dots == 2;
	}

	private static boolean containsEncodedDot(String path) {
		for (int i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
			if (hexByte(path.charAt(i + 1), path.charAt(i + 2)) == '.') {
				return true;
			}
		}
		return false;
	}

	/**
	 * The canonical form of a path that has only segment-level problems: encoded dots decoded, dot segments
	 * removed (RFC 3986 section 5.2.4), empty segments merged; a trailing {@code /} (or a trailing dot segment,
	 * which stands for one) is kept.
	 */
	private static String normalize(String path) {
		String decoded = path.replace("%2E", ".").replace("%2e", ".");
		List<String> output = new ArrayList<>();
		String[] segments = decoded.substring(1).split("/", -1);
		boolean trailingSlash = false;
		for (int i = 0; i < segments.length; i++) {
			String segment = segments[i];
			boolean last = i == segments.length - 1;
			trailingSlash = last && (segment.isEmpty() || segment.equals(".") || segment.equals(".."));
			if (segment.equals("..")) {
				if (!output.isEmpty()) {
					output.remove(output.size() - 1);
				}
			}
			else if (!segment.isEmpty() && !segment.equals(".")) {
				output.add(segment);
			}
		}
		String joined = "/" + String.join("/", output);
		return (trailingSlash && !output.isEmpty()) ? joined + "/" : joined;
	}

	private static boolean decodesAsUtf8(String path) {
		ByteBuffer bytes = ByteBuffer.allocate(path.length());
		for (int i = 0; i < path.length(); i++) {
			char c = path.charAt(i);
			if (c == '%') {
				bytes.put((byte) hexByte(path.charAt(i + 1), path.charAt(i + 2)));
				i += 2;
			}
			else {
				bytes.put((byte) c);
			}
		}
		bytes.flip();
		try {
			StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(bytes);
			return true;
		}
		catch (CharacterCodingException ex) {
			return false;
		}
	}

	/** The byte of two ASCII hex digits, or -1 when either is not one. */
	private static int hexByte(char high, char low) {
		int h = hexDigit(high);
		int l = hexDigit(low);
		return (h < 0 || l < 0) ? -1 : (h << 4) | l;
	}

	private static int hexDigit(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		if (c >= 'A' && c <= 'F') {
			return c - 'A' + 10;
		}
		return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
	}

}
