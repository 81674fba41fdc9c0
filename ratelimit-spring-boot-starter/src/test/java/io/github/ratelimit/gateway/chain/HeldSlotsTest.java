package io.github.ratelimit.gateway.chain;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class HeldSlotsTest {

	@Test
	void onceRunsItsActionOnceHoweverOftenReleased() {
		AtomicInteger runs = new AtomicInteger();
		HeldSlots slots = HeldSlots.once(runs::incrementAndGet);
		slots.release();
		slots.release();
		assertThat(runs).hasValue(1);
	}

	@Test
	void bothReleasesEachEvenWhenTheFirstThrows() {
		List<String> released = new ArrayList<>();
		HeldSlots failing = () -> {
			released.add("client");
			throw new IllegalStateException("boom");
		};
		HeldSlots both = HeldSlots.both(failing, () -> released.add("group"));
		assertThatIllegalStateException().isThrownBy(both::release);
		assertThat(released).containsExactly("client", "group");
		HeldSlots one = () -> released.add("one");
		assertThat(HeldSlots.both(HeldSlots.NONE, one)).isSameAs(one);
		assertThat(HeldSlots.both(one, HeldSlots.NONE)).isSameAs(one);
	}

}
