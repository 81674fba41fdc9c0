package io.github.ratelimit.gateway.redis;

import java.util.Locale;

/**
 * What an error from Redis says about the limiter's access to it: refused credentials, a missing ACL permission, or
 * anything else (Redis down, a timeout). Read from the messages of the error and its causes, as Redis 7 words them:
 * {@code WRONGPASS} and {@code NOAUTH} (AUTH or HELLO refused, or none sent), {@code NOPERM} (a command or key the
 * user may not use, refused before the script runs) and, from inside a Lua script, {@code The user executing the
 * script can't run this command or subcommand} and {@code ... can't access at least one of the keys}.
 */
enum RedisAccessProblem {

	/** Redis refused the user name or password, or needs them and got none. */
	AUTHENTICATION,

	/** The ACL user lacks a command or a key pattern the limiter needs. */
	PERMISSION,

	/** Not an access problem (unreachable, timed out, another error). */
	OTHER;

	/**
	 * Classify an error.
	 * @param error the error, as completed by a Lettuce or Spring Data future (wrapped or not)
	 * @return its kind, {@link #OTHER} for {@code null}
	 */
	public static RedisAccessProblem of(Throwable error) {
		for (Throwable cause = error; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			String message = cause.getMessage();
			if (message == null) {
				continue;
			}
			String text = message.toUpperCase(Locale.ROOT);
			if (text.contains("WRONGPASS") || text.contains("NOAUTH")
					|| text.contains("INVALID USERNAME-PASSWORD PAIR")) {
				return AUTHENTICATION;
			}
			if (text.contains("NOPERM") || text.contains("THE USER EXECUTING THE SCRIPT CAN'T")) {
				return PERMISSION;
			}
		}
		return OTHER;
	}

	/**
	 * The message of the deepest cause that tells this problem (else the deepest message), for a log line.
	 * @param error the error
	 * @return the message, e.g. {@code WRONGPASS invalid username-password pair or user is disabled.}
	 */
	static String reason(Throwable error) {
		String reason = null;
		String telling = null;
		for (Throwable cause = error; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause.getMessage() != null) {
				reason = cause.getMessage();
				if (of(new RuntimeException(reason)) != OTHER) {
					telling = reason; // the deepest: wrappers repeat it behind their class name
				}
			}
		}
		return (telling != null) ? telling : (reason != null) ? reason : String.valueOf(error);
	}

}
