package io.github.ratelimit.gateway.protection;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Places a test takes in a gateway's upstream protections, whatever their limit, and gives back after each test.
 * Register it with {@code @RegisterExtension}.
 */
public final class HeldPlaces implements AfterEachCallback {

	private final List<UpstreamPermit> held = new ArrayList<>();

	/**
	 * Take places for requests of a priority, as {@link UpstreamProtection#acquire} does (whatever the limit).
	 * @param protection the protection
	 * @param priority the requests' priority
	 * @param places how many, at least 0
	 */
	public void hold(UpstreamProtection protection, Priority priority, int places) {
		for (int i = 0; i < places; i++) {
			this.held.add(protection.acquire(priority));
		}
	}

	@Override
	public void afterEach(ExtensionContext context) {
		this.held.forEach(UpstreamPermit::release);
		this.held.clear();
	}

}
