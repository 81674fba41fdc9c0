package io.github.ratelimit.gateway.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

/**
 * Who a request is limited as, answered by a {@link ClientKeyResolver}: identified (with its {@link ClientKey}), not
 * identified (the request is answered 400 Bad Request rather than put into a shared bucket), or ambiguous (the
 * request names more than one client, e.g. two API key header lines: 400 Bad Request too).
 *
 * @param client the client's key when identified, else {@code null}
 * @param ambiguity when ambiguous, what is ambiguous (a header's name, never a credential), safe to show to the
 * client and to log; else {@code null}
 */
public record ClientResolution(@Nullable ClientKey client, @Nullable String ambiguity) {

	private static final ClientResolution UNIDENTIFIED = new ClientResolution(null, null);

	/**
	 * Check the resolution: at most one of its cases.
	 */
	public ClientResolution {
		if (client != null && ambiguity != null) {
			throw new IllegalArgumentException("A client is either identified or ambiguous");
		}
	}

	/**
	 * An identified client.
	 * @param client its key
	 * @return the resolution
	 */
	public static ClientResolution identified(ClientKey client) {
		return new ClientResolution(client, null);
	}

	/**
	 * A request whose client cannot be identified at all (no identity and no client address).
	 * @return the resolution
	 */
	public static ClientResolution unidentified() {
		return UNIDENTIFIED;
	}

	/**
	 * A request naming more than one client.
	 * @param message what is ambiguous, safe to show to the client and to log (names a header, never a value)
	 * @return the resolution
	 */
	public static ClientResolution ambiguous(String message) {
		return new ClientResolution(null, message);
	}

	/**
	 * Whether the client is identified.
	 * @return {@code client() != null}
	 */
	public boolean isIdentified() {
		return this.client != null;
	}

	/**
	 * Whether the request names more than one client.
	 * @return {@code ambiguity() != null}
	 */
	public boolean isAmbiguous() {
		return this.ambiguity != null;
	}

	/**
	 * This resolution as a completed stage.
	 * @return the stage
	 */
	CompletionStage<ClientResolution> completed() {
		return CompletableFuture.completedStage(this);
	}

}
